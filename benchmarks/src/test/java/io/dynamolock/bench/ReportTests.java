package io.dynamolock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategorySeries;

/** What the report prints and draws says what was measured. */
class ReportTests {

    private static final long MS = 1_000_000;
    private static final List<String> EIGHT = List.of("1-0", "2-0", "3-0", "4-0", "5-0", "6-0", "7-0", "8-0");

    private static Grant grant(String contender, int jvm, long waitStart, long granted, long released, long answered) {
        return new Grant(contender, jvm, waitStart * MS, granted * MS, released * MS, answered * MS, -1);
    }

    /** Two JVMs taking turns, 40 ms apart: 4 grants in a window of 140 ms, 2 in the drain after it. */
    private static ContendedRun turns() {
        List<Grant> grants = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            long t = i * 40;
            grants.add(grant((i % 2 + 1) + "-0", i % 2 + 1, t - 20, t + 10, t + 30, t + 35));
        }
        return new ContendedRun(CompetitorKind.DYNAMOLOCK, List.of("1-0", "2-0"), grants, 0, 140 * MS, Meter.NONE, 0);
    }

    @Test
    void handoffsAreThoseOfTheWindowNotOfTheDrain() {
        ContendedScenario.Row row = ContendedScenario.row(turns(), 5 * MS);
        assertThat(row.grants()).isEqualTo(4);
        assertThat(row.handoffsAcrossJvms()).as("the 3 between the window's 4 grants").isEqualTo(3);
        assertThat(row.handoffCrossJvmP50()).as("release at t+30, next grant at t+50").isEqualTo(20);
        assertThat(row.handoffsAcrossJvmsPerSecond()).isEqualTo(3 / 0.14, org.assertj.core.data.Offset.offset(1e-9));
    }

    /** A lock that gives itself the lock back: one contender took every grant while the others failed. */
    @Test
    void aRunWithoutHandoffsShowsNoHandoffFigures() {
        List<Grant> grants = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            grants.add(grant("1-0", 1, i * 30, i * 30 + 5, i * 30 + 25, i * 30 + 30));
        }
        ContendedScenario.Row row = ContendedScenario.row(
                new ContendedRun(CompetitorKind.AWS_DEFAULTS, EIGHT, grants, 0, 300 * MS, Meter.NONE, 7), 5 * MS);
        String goals = Summary.goals(List.of(CompetitorKind.AWS_DEFAULTS), List.of(row));
        Map<String, String> cells = goals.lines().filter(line -> line.startsWith("| ") && !line.startsWith("| --"))
                .map(line -> line.substring(2, line.length() - 2).split(" \\| "))
                .filter(cols -> cols.length == 2).collect(Collectors.toMap(cols -> cols[0], cols -> cols[1]));
        assertThat(cells).containsEntry("handoff p50 ms across processes (handoffs)", "- (0)")
                .containsEntry("of them handoffs between processes, per second", "0.0");
        assertThat(cells.entrySet()).filteredOn(e -> e.getKey().startsWith("p50 of its parts"))
                .extracting(Map.Entry::getValue).containsExactly("- / -");
        assertThat(cells.entrySet()).filteredOn(e -> e.getKey().startsWith("bound if"))
                .as("not a handoff figure: every release of the window counts, 20 ms holds and 5 ms releases,"
                        + " against the run's 10 grants in 300 ms")
                .extracting(Map.Entry::getValue).containsExactly("0.80 / 40.0 (1.20x)");
    }

    /** The bound takes the mean, not the median: one slow release in four moves it. */
    @Test
    void theBoundIsTheMeanCycleOfTheWindow() {
        List<Grant> grants = new ArrayList<>();
        long t = 0;
        for (int i = 0; i < 4; i++) {
            long release = i == 3 ? 45 : 5;
            grants.add(grant((i % 2 + 1) + "-0", i % 2 + 1, t - 20, t, t + 20, t + 20 + release));
            t += 20 + release;
        }
        ContendedScenario.Row row = ContendedScenario.row(
                new ContendedRun(CompetitorKind.DYNAMOLOCK, List.of("1-0", "2-0"), grants, 0, t * MS, Meter.NONE, 0),
                5 * MS);
        assertThat(row.holdMean()).isEqualTo(20);
        assertThat(row.releaseMean()).as("(5 + 5 + 5 + 45) / 4, where the median is 5").isEqualTo(15);
        assertThat(boundCell(row)).isEqualTo("0.57 / 28.6");
    }

    @Test
    void aRunWithoutGrantsHasNoBound() {
        ContendedScenario.Row row = ContendedScenario.row(
                new ContendedRun(CompetitorKind.DYNAMOLOCK, EIGHT, List.of(), 0, 300 * MS, Meter.NONE, 8), 5 * MS);
        assertThat(boundCell(row)).isEqualTo("-");
    }

    private static String boundCell(ContendedScenario.Row row) {
        return Summary.goals(List.of(row.kind()), List.of(row)).lines().filter(line -> line.startsWith("| bound if"))
                .map(line -> line.substring(2, line.length() - 2).split(" \\| ")[1]).findFirst().orElseThrow();
    }

    /** A hand-over: the next holder starts before the release's answer, so the handoff is below its parts' sum. */
    @Test
    void theHandoffChartShowsTheHandoffItselfBesideItsParts() {
        ContendedScenario.Row row = new ContendedScenario.Row(CompetitorKind.DYNAMOLOCK_HINTS_AUTH, 8, 538, 44.8,
                0.90, 146, 162, 196, 1.10, 1.0, 0, 0, 0, 1.8, 543, 11.3, -9.5, 21.0, 11.5, 2.0, Meter.NONE, 0, 0, new double[538]);
        CategoryChart handoff = (CategoryChart) Report.processesCharts(List.of(CompetitorKind.DYNAMOLOCK_HINTS_AUTH),
                List.of(row)).get(1);
        assertThat(handoff.getStyler().isStacked()).isFalse();
        Map<String, Number> bars = handoff.getSeriesMap().values().stream().collect(Collectors.toMap(
                CategorySeries::getName, series -> series.getYData().iterator().next()));
        assertThat(bars).containsEntry("handoff: release call to the next grant", 1.8)
                .containsEntry("the release's own request", 11.3)
                .containsEntry("its answer to the next grant (< 0: before it)", -9.5);
    }

    private static ContendedScenario.Row rate(CompetitorKind kind, double grantsPerSecond) {
        return new ContendedScenario.Row(kind, 8, 100, grantsPerSecond, 0.5, 100, 150, 200, 1.0, 1.0, 0, 0, 0, 30, 90,
                10, 20, 21, 10, 3.5, Meter.NONE, 0, 0, new double[100]);
    }

    /**
     * Scenario 7 measures in two passes, the second in reverse order: a ratio compares runs of one pass, the headline
     * the means, and the chart and table show each competitor's passes as such.
     */
    @Test
    void aRatioComparesRunsOfOnePassAndTheHeadlineTheMeans() {
        List<ContendedScenario.Row> rows = List.of(rate(CompetitorKind.DYNAMOLOCK, 16),
                rate(CompetitorKind.AWS_DEFAULTS, 20), rate(CompetitorKind.AWS_DEFAULTS, 16),
                rate(CompetitorKind.DYNAMOLOCK, 20));
        List<CompetitorKind> kinds = List.of(CompetitorKind.DYNAMOLOCK, CompetitorKind.AWS_DEFAULTS);
        Map<String, String> dynamolock = Summary.goals(kinds, rows).lines()
                .filter(line -> line.startsWith("| ") && !line.startsWith("| --"))
                .map(line -> line.substring(2, line.length() - 2).split(" \\| "))
                .filter(cols -> cols.length == 3).collect(Collectors.toMap(cols -> cols[0], cols -> cols[1]));

        assertThat(dynamolock).containsEntry("grants/s, mean of the passes (x AWS lock client, defaults)",
                "18.0 (1.00x)").containsEntry(
                "grants/s, the issue's handoffs/s, each pass (x AWS lock client in that pass)", "16.0 (0.80x); 20.0 (1.25x)")
                .containsEntry("requests per grant", "3.50; 3.50");
        CategoryChart throughput = (CategoryChart) Report.processesCharts(kinds, rows).get(0);
        assertThat(throughput.getSeriesMap().get("grants (issue 12's handoffs/s)").getYData().stream()
                .map(Number::doubleValue)).containsExactly(18.0, 18.0);
        assertThat(Report.markdown(kinds, new Report.Results("", List.of(),
                new ContendedScenario.Result(List.of(), List.of()), List.of(), List.of(), rows, Optional.empty()))
                .lines().filter(line -> line.startsWith("| dynamolock (defaults), pass ")).map(line -> line.split(" \\| ")[0]))
                .containsExactly("| dynamolock (defaults), pass 1", "| dynamolock (defaults), pass 2");
    }

    /** Scenario 5: a waiter granted while the holder still held counts as two holders at once. */
    @Test
    void aWaiterGrantedWhileTheHolderHeldCountsAsTwoHolders() {
        Report.Results results = new Report.Results("", List.of(), new ContendedScenario.Result(List.of(), List.of()),
                List.of(), List.of(new WaitingCostScenario.Row(CompetitorKind.DYNAMOLOCK, 10, 1.5, Meter.NONE, 2)),
                List.of(), Optional.empty());
        assertThat(Summary.markdown(List.of(CompetitorKind.DYNAMOLOCK), results).lines()
                .filter(line -> line.startsWith("| two holders at once")))
                .containsExactly("| two holders at once (scenarios 2, 3, 5 and 7) | 2 |");
    }

    /** Scenario 3's run across JVMs is scenario 2's T = 2 run: an overlap in it is one, not two. */
    @Test
    void anOverlapIsCountedOnceInTheSummary() {
        List<Grant> grants = new ArrayList<>(List.of(
                grant("1-0", 1, 0, 10, 30, 35),
                grant("2-0", 2, 0, 20, 50, 55), // granted while 1-0 is inside: one overlap
                grant("1-0", 1, 40, 60, 80, 85)));
        ContendedRun pair = new ContendedRun(CompetitorKind.DYNAMOLOCK, List.of("1-0", "2-0"), grants, 0, 100 * MS,
                Meter.NONE, 0);
        ContendedRun same = new ContendedRun(CompetitorKind.DYNAMOLOCK, List.of("1-0", "1-1"), List.of(), 0, 100 * MS,
                Meter.NONE, 0);
        Report.Results results = new Report.Results("", List.of(), new ContendedScenario.Result(
                List.of(ContendedScenario.row(pair, 5 * MS)), List.of(ContendedScenario.handoff(same, pair))),
                List.of(), List.of(), List.of(), Optional.empty());
        assertThat(Summary.markdown(List.of(CompetitorKind.DYNAMOLOCK), results).lines()
                .filter(line -> line.startsWith("| two holders at once")))
                .containsExactly("| two holders at once (scenarios 2, 3, 5 and 7) | 1 |");
    }
}
