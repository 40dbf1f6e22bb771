package io.dynamolock.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/** The report's first table: one column per competitor, the headline figure of every scenario in a row. */
final class Summary {

    private Summary() {
    }

    static String markdown(List<CompetitorKind> kinds, Report.Results r) {
        StringBuilder md = new StringBuilder("\n## Summary\n\n");
        List<String> head = new ArrayList<>(List.of(""));
        kinds.forEach(kind -> head.add(kind.label));
        Report.header(md, head.toArray(String[]::new));
        String ts = Arrays.stream(ContendedScenario.CONTENDERS).mapToObj(Integer::toString)
                .collect(Collectors.joining(" / "));

        line(md, kinds, "requests per uncontended acquire + release", kind -> uncontended(r, kind)
                .map(row -> Report.f2(row.requestsPerCycle())));
        line(md, kinds, "uncontended acquire p50 / p99 ms", kind -> uncontended(r, kind)
                .map(row -> Report.f1(row.acquireP50()) + " / " + Report.f1(row.acquireP99())));
        line(md, kinds, "handoff p50 ms, same JVM / across JVMs (handoffs), T = 2 (scenario 3)", kind -> r.contended()
                .handoffs().stream().filter(h -> h.kind() == kind)
                .map(h -> Report.f1OrDash(Stats.percentile(h.sameJvmMillis(), 50), h.sameJvmMillis().length) + " / "
                        + Report.f1OrDash(Stats.percentile(h.crossJvmMillis(), 50), h.crossJvmMillis().length) + " ("
                        + h.sameJvmMillis().length + " / " + h.crossJvmMillis().length + ")"));
        line(md, kinds, "FIFO overtakes, share of grants, T = " + ts, kind -> contended(r, kind)
                .map(row -> Report.f0(100.0 * row.overtakes() / Math.max(1, row.waitsMillis().length)) + "%"));
        line(md, kinds, "Jain index, T = " + ts, kind -> contended(r, kind).map(row -> Report.f3(row.jain())));
        line(md, kinds, "wait max ms, T = " + ts, kind -> contended(r, kind).map(row -> Report.f0(row.waitMax())));
        line(md, kinds, "utilisation, T = " + ts, kind -> contended(r, kind)
                .map(row -> Report.f2(row.utilisation())));
        line(md, kinds, "requests per grant, T = " + ts, kind -> contended(r, kind)
                .map(row -> Report.f2(row.requestsPerGrant())));
        line(md, kinds, "$ per million acquisitions, uncontended / T = " + ts, kind -> Stream.concat(
                uncontended(r, kind).map(row -> Report.f2(Report.dollarsPerMillion(row.meter(), row.iterations()))),
                contended(r, kind).map(row -> Report.f2(Report.dollarsPerMillion(row.meter(),
                        row.waitsMillis().length)))));
        line(md, kinds, "requests/s per waiter, queue of " + Arrays.stream(WaitingCostScenario.QUEUES)
                .mapToObj(Integer::toString).collect(Collectors.joining(" / ")) + " (scenario 5, one JVM)", kind -> r.waitingCost().stream()
                        .filter(row -> row.kind() == kind).map(row -> Report.f1(row.requestsPerSecondPerWaiter())));
        line(md, kinds, "writes to items of no entity (scenario 4)", kind -> r.manyEntities().stream()
                .filter(row -> row.kind() == kind).map(row -> Long.toString(row.otherItemWrites())));
        line(md, kinds, "two holders at once (scenarios 2, 3, 5 and 7)", kind -> Stream.of(Integer.toString(
                Stream.concat(contended(r, kind), r.processes().stream().filter(row -> row.kind() == kind))
                        .mapToInt(ContendedScenario.Row::overlaps).sum()
                        + r.contended().handoffs().stream().filter(h -> h.kind() == kind)
                                .mapToInt(ContendedScenario.Handoff::overlaps).sum()
                        + r.waitingCost().stream().filter(row -> row.kind() == kind)
                                .mapToInt(WaitingCostScenario.Row::grantedWhileHeld).sum())));
        return md.toString();
    }

    /**
     * Issue 12's goals table, from the separate-process runs: grants/s, which the issue calls handoffs/s (and as a
     * multiple of AWS's lock client at its defaults), the handoffs between processes among them, handoff p50 across
     * processes, utilisation, requests per grant, Jain index and FIFO overtakes. {@code rows} may hold several runs of
     * a competitor, one per pass ({@link ProcessesScenario}: the given order, then the reverse); a cell shows each
     * pass's figure, separated by "; ", and a ratio compares competitors of the same pass.
     */
    static String goals(List<CompetitorKind> kinds, List<ContendedScenario.Row> rows) {
        StringBuilder md = new StringBuilder("\n## Goals (issue 12): T = " + ProcessesScenario.PROCESSES
                + " contenders, each in its own process, 20 ms holds (scenario 7)\n\n");
        md.append("Each competitor measured in passes: the first in the columns' order, the next in the reverse one"
                + " (the workers keep warming up along a run). Figures per pass separated by \"" + PASSES.strip()
                + "\"; a ratio compares competitors of the same pass.\n\n");
        List<String> head = new ArrayList<>(List.of(""));
        kinds.forEach(kind -> head.add(kind.label));
        Report.header(md, head.toArray(String[]::new));
        double awsMean = meanGrantsPerSecond(of(rows, CompetitorKind.AWS_DEFAULTS).toList());
        line(md, kinds, "grants/s, mean of the passes (x AWS lock client, defaults)", kind -> {
            double mean = meanGrantsPerSecond(of(rows, kind).toList());
            return Stream.of(Report.f1(mean) + (awsMean > 0 ? " (" + Report.f2(mean / awsMean) + "x)" : ""));
        });
        line(md, kinds, "grants/s, the issue's handoffs/s, each pass (x AWS lock client in that pass)",
                kind -> eachPass(rows, kind, (row, awsRow) -> Report.f1(row.grantsPerSecond())
                        + (awsRow != null && awsRow.grantsPerSecond() > 0
                                ? " (" + Report.f2(row.grantsPerSecond() / awsRow.grantsPerSecond()) + "x)" : "")));
        line(md, kinds, "of them handoffs between processes, per second",
                kind -> eachPass(rows, kind, (row, awsRow) -> Report.f1(row.handoffsAcrossJvmsPerSecond())));
        line(md, kinds, "handoff p50 ms across processes (handoffs)", kind -> eachPass(rows, kind, (row, awsRow) ->
                Report.f1OrDash(row.handoffCrossJvmP50(), row.handoffsAcrossJvms()) + " ("
                        + row.handoffsAcrossJvms() + ")"));
        line(md, kinds, "p50 of its parts, ms: the release's request / its answer to the next grant"
                + " (negative: granted before the answer)", kind -> eachPass(rows, kind, (row, awsRow) ->
                Report.f1OrDash(row.releaseCrossJvmP50(), row.handoffsAcrossJvms()) + " / "
                        + Report.f1OrDash(row.answerToGrantCrossJvmP50(), row.handoffsAcrossJvms())));
        line(md, kinds, "lock utilisation", kind -> eachPass(rows, kind, (row, awsRow) -> Report.f2(row.utilisation())));
        // A waiter that learns of a release from DynamoDB learns of it after its write has landed and an answer has
        // come back: at best as the releaser learns it, one round trip after the call. That bounds every lock whose
        // next holder waits for the release to land; a hand-over (authenticated hints) does not wait for it. Means,
        // over every grant of the window: utilisation is a mean too, and these latencies are skewed to the right.
        line(md, kinds, "bound if the next holder waits for the release's request (means of the window's holds and"
                + " releases): utilisation / grants/s (x AWS)",
                kind -> eachPass(rows, kind, (row, awsRow) -> bound(row, awsRow == null ? 0 : awsRow.grantsPerSecond())));
        line(md, kinds, "requests per grant",
                kind -> eachPass(rows, kind, (row, awsRow) -> Report.f2(row.requestsPerGrant())));
        line(md, kinds, "Jain index / FIFO overtakes (share of grants)", kind -> eachPass(rows, kind, (row, awsRow) ->
                Report.f3(row.jain()) + " / "
                        + Report.f0(100.0 * row.overtakes() / Math.max(1, row.waitsMillis().length)) + "%"));
        return md.toString();
    }

    private static String bound(ContendedScenario.Row row, double aws) {
        if (row.grants() == 0) {
            return "-"; // no grant, so no hold or release measured
        }
        double cycle = row.holdMean() + row.releaseMean();
        return Report.f2(row.holdMean() / cycle) + " / " + Report.f1(1000 / cycle)
                + (aws > 0 ? " (" + Report.f2(1000 / cycle / aws) + "x)" : "");
    }

    /** Between the figures of a competitor's passes in one cell. */
    static final String PASSES = "; ";

    /**
     * One cell: {@code figure} of each of the competitor's runs in {@code rows}, pass by pass, given the AWS lock
     * client's run of the same pass ({@code null} if it has none).
     */
    private static Stream<String> eachPass(List<ContendedScenario.Row> rows, CompetitorKind kind,
            BiFunction<ContendedScenario.Row, ContendedScenario.Row, String> figure) {
        List<ContendedScenario.Row> runs = of(rows, kind).toList();
        List<ContendedScenario.Row> aws = of(rows, CompetitorKind.AWS_DEFAULTS).toList();
        return Stream.of(IntStream.range(0, runs.size())
                .mapToObj(pass -> figure.apply(runs.get(pass), pass < aws.size() ? aws.get(pass) : null))
                .collect(Collectors.joining(PASSES)));
    }

    /** The mean of the runs' grants/s, 0 for none. */
    static double meanGrantsPerSecond(List<ContendedScenario.Row> runs) {
        return runs.stream().mapToDouble(ContendedScenario.Row::grantsPerSecond).average().orElse(0);
    }

    private static Stream<ContendedScenario.Row> of(List<ContendedScenario.Row> rows, CompetitorKind kind) {
        return rows.stream().filter(row -> row.kind() == kind);
    }

    /** A row whose cell for each competitor joins that competitor's figures with " / ". */
    private static void line(StringBuilder md, List<CompetitorKind> kinds, String label,
            Function<CompetitorKind, Stream<String>> figures) {
        List<String> cells = new ArrayList<>(List.of(label));
        kinds.forEach(kind -> cells.add(figures.apply(kind).collect(Collectors.joining(" / "))));
        Report.row(md, cells.toArray(String[]::new));
    }

    private static Stream<UncontendedScenario.Row> uncontended(Report.Results r, CompetitorKind kind) {
        return r.uncontended().stream().filter(row -> row.kind() == kind);
    }

    private static Stream<ContendedScenario.Row> contended(Report.Results r, CompetitorKind kind) {
        return r.contended().rows().stream().filter(row -> row.kind() == kind);
    }
}
