package io.dynamolock.bench;

import java.awt.Font;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** Writes {@code results.md} (the tables) and {@code charts.png} (four charts) into the output folder. */
final class Report {

    /** On-demand prices assumed: us-east-1 after the November 2024 price cut. An assumption; check your region. */
    static final double DOLLARS_PER_MILLION_WRITE_UNITS = 0.625;
    static final double DOLLARS_PER_MILLION_READ_UNITS = 0.125;

    /** The contender count whose waits the wait-time chart shows. */
    static final int CHARTED_CONTENDERS = 8;

    record Results(String header, List<UncontendedScenario.Row> uncontended, ContendedScenario.Result contended,
            List<ManyEntitiesScenario.Row> manyEntities, List<WaitingCostScenario.Row> waitingCost,
            List<ContendedScenario.Row> processes, Optional<RenewalCapacityScenario.Result> renewal) {
    }

    private Report() {
    }

    /** Dollars per million acquisitions, if {@code meter} was the cost of {@code acquisitions}. */
    static double dollarsPerMillion(Meter meter, long acquisitions) {
        if (acquisitions == 0) {
            return 0;
        }
        return (meter.writeUnits() * DOLLARS_PER_MILLION_WRITE_UNITS + meter.readUnits() * DOLLARS_PER_MILLION_READ_UNITS)
                / acquisitions;
    }

    static void write(Path dir, List<CompetitorKind> kinds, Results results) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("results.md"), markdown(kinds, results));
        List<Chart<?, ?>> charts = new ArrayList<>();
        if (!results.contended().rows().isEmpty()) {
            CategoryChart utilisation = contendedChart(kinds, results, "Lock utilisation (time some holder works)",
                    "utilisation", ContendedScenario.Row::utilisation);
            utilisation.getStyler().setYAxisMin(0.0).setYAxisMax(1.0);
            charts.addAll(List.of(contendedChart(kinds, results, "Grants per second (20 ms holds, 2 JVMs)",
                    "grants/s", ContendedScenario.Row::grantsPerSecond), utilisation, waitChart(kinds, results)));
        }
        if (!results.processes().isEmpty()) {
            charts.addAll(processesCharts(kinds, results.processes()));
        }
        if (!results.waitingCost().isEmpty()) {
            charts.add(waitingCostChart(kinds, results));
        }
        if (!charts.isEmpty()) {
            int columns = charts.size() % 2 == 0 ? 2 : 1;
            BitmapEncoder.saveBitmap(charts, charts.size() / columns, columns,
                    dir.resolve("charts.png").toString(), BitmapEncoder.BitmapFormat.PNG);
        }
    }

    /** The tables a reader looks for first, also printed at the end of a run: issue 12's goals and R12's capacity. */
    static String headline(List<CompetitorKind> kinds, Results r) {
        StringBuilder md = new StringBuilder();
        if (!r.processes().isEmpty()) {
            md.append(Summary.goals(kinds, r.processes()));
        }
        r.renewal().ifPresent(renewal -> renewalCapacity(md, renewal));
        return md.toString();
    }

    static String markdown(List<CompetitorKind> kinds, Results r) {
        StringBuilder md = new StringBuilder(r.header());
        if (!r.processes().isEmpty()) {
            md.append(Summary.goals(kinds, r.processes()));
        }
        md.append(Summary.markdown(kinds, r));

        md.append("\n## 1. Uncontended: one thread, one lock\n\n");
        header(md, "competitor", "acquire p50 ms", "acquire p99 ms", "release p50 ms", "release p99 ms",
                "requests / acquire+release", "by operation");
        for (UncontendedScenario.Row row : r.uncontended()) {
            row(md, row.kind().label, f1(row.acquireP50()), f1(row.acquireP99()), f1(row.releaseP50()),
                    f1(row.releaseP99()), f2(row.requestsPerCycle()), row.meter().describePer(row.iterations()));
        }

        md.append("\n## 2. Contended: one lock, T contenders split over 2 JVMs, 20 ms holds\n\n");
        md.append("Grants/s, utilisation and handoffs over the measured window; waits, overtakes and requests over"
                + " every grant, the drain after the window included. Grants/s is what issue 12 calls handoffs/s: for a"
                + " lock that gives the lock back to the contender or process that released it, most grants are not"
                + " handoffs. Utilisation: the fraction of the window in which some"
                + " contender was inside its critical section. Max wait / T cycles: the longest wait divided by T times"
                + " the average time per grant; a waiter in a FIFO queue waits for T-1 holds and T handoffs, so about 1"
                + " means the wait is bounded by the queue ahead. Handoff p50: release to the next waiter's grant,"
                + " within one JVM / across JVMs, to a contender already waiting at the release (- if none)."
                + " FIFO overtakes: grants that went to a contender while one that had started waiting more than one"
                + " simulated round trip earlier still waited (a request delayed longer than that can reach DynamoDB after a"
                + " later one); for dynamolock, in brackets, grants out of ticket order, i.e. out of the order in"
                + " which the requests reached DynamoDB. Overlaps: two holders at once (must be 0).\n\n");
        contendedTable(md, r.contended().rows());

        md.append("\n## 3. Handoff latency: from the holder's release to the next waiter's grant\n\n");
        md.append("Same JVM: 2 contenders in one JVM; across JVMs: the T=2 run of scenario 2 (one contender per JVM)."
                + " Only handoffs of the measured window to another contender that was already waiting count."
                + " Overlaps: two holders at once in the same-JVM run (must be 0; the across-JVM run's are scenario"
                + " 2's, T=2).\n\n");
        header(md, "competitor", "same JVM p50 ms", "same JVM p99 ms", "handoffs", "utilisation",
                "across JVMs p50 ms", "across JVMs p99 ms", "handoffs", "utilisation", "overlaps");
        for (ContendedScenario.Handoff row : r.contended().handoffs()) {
            row(md, row.kind().label, f1(Stats.percentile(row.sameJvmMillis(), 50)),
                    f1(Stats.percentile(row.sameJvmMillis(), 99)), Integer.toString(row.sameJvmMillis().length),
                    f2(row.sameJvmUtilisation()), f1(Stats.percentile(row.crossJvmMillis(), 50)),
                    f1(Stats.percentile(row.crossJvmMillis(), 99)), Integer.toString(row.crossJvmMillis().length),
                    f2(row.crossJvmUtilisation()), Integer.toString(row.overlaps()));
        }

        md.append("\n## 4. Many entities: ").append(ManyEntitiesScenario.THREADS).append(" threads, ")
                .append(ManyEntitiesScenario.ENTITIES).append(" entities, no hold\n\n");
        header(md, "competitor", "acquires/s", "requests/s", "items written", "max writes on one item", "mean writes per entity item",
                "writes to other items", "failed acquires");
        for (ManyEntitiesScenario.Row row : r.manyEntities()) {
            row(md, row.kind().label, f0(row.acquiresPerSecond()), f0(row.requestsPerSecond()),
                    Integer.toString(row.itemsWritten()),
                    Long.toString(row.maxWritesPerItem()), f1(row.meanWritesPerItem()),
                    Long.toString(row.otherItemWrites()), Integer.toString(row.failures()));
        }

        md.append("\n## 5. Waiting cost: requests per second per waiter while one holder keeps the lock\n\n");
        md.append("All waiters in one JVM; the holder's own requests are not counted. The window is shorter than a"
                + " heartbeat interval (30 s by default), so dynamolock's renewals of its waiters' entries are not in"
                + " these figures: one write per waiter per heartbeat interval, 0.03/s at the defaults (the other"
                + " competitors' waiters renew nothing).\n\n");
        List<String> head = new ArrayList<>(List.of("competitor"));
        Arrays.stream(WaitingCostScenario.QUEUES).forEach(n -> head.add(n + (n == 1 ? " waiter" : " waiters")));
        header(md, head.toArray(String[]::new));
        for (CompetitorKind kind : kinds) {
            List<String> cells = new ArrayList<>(List.of(kind.label));
            r.waitingCost().stream().filter(row -> row.kind() == kind)
                    .forEach(row -> cells.add(f2(row.requestsPerSecondPerWaiter())));
            row(md, cells.toArray(String[]::new));
        }

        md.append("\n## 6. Cost: dollars per million acquisitions, on-demand\n\n");
        md.append("From the request units of scenarios 1 and 2 (all requests, heartbeats and polls included), at $")
                .append(DOLLARS_PER_MILLION_WRITE_UNITS).append(" per million write request units and $")
                .append(DOLLARS_PER_MILLION_READ_UNITS).append(" per million read request units (assumed: us-east-1"
                        + " on-demand, November 2024 price list); in brackets the write (W) and read (R) request units per"
                + " acquisition. Waiting: dollars per waiter-hour in a queue of 10, from scenario 5 (so without"
                + " dynamolock's renewals: 120 writes per waiter-hour at the default 30 s heartbeat).\n\n");
        List<String> costHead = new ArrayList<>(List.of("competitor", "uncontended"));
        Arrays.stream(ContendedScenario.CONTENDERS).forEach(t -> costHead.add("T=" + t));
        costHead.add("waiting, $ / waiter-hour");
        header(md, costHead.toArray(String[]::new));
        for (CompetitorKind kind : kinds) {
            List<String> cells = new ArrayList<>(List.of(kind.label));
            r.uncontended().stream().filter(row -> row.kind() == kind)
                    .forEach(row -> cells.add(cost(row.meter(), row.iterations())));
            r.contended().rows().stream().filter(row -> row.kind() == kind)
                    .forEach(row -> cells.add(cost(row.meter(), row.waitsMillis().length)));
            r.waitingCost().stream().filter(row -> row.kind() == kind && row.waiters() == 10)
                    .forEach(row -> cells.add("$" + f4(waiterHourDollars(row))));
            row(md, cells.toArray(String[]::new));
        }

        if (!r.processes().isEmpty()) {
            md.append("\n## 7. Separate processes: one lock, T = ").append(ProcessesScenario.PROCESSES)
                    .append(" contenders, each in a JVM of its own, 20 ms holds\n\n");
            md.append("As scenario 2, but no two contenders share a JVM: every handoff crosses processes, as between"
                    + " the instances of a service. Same columns as there.\n\n");
            contendedTable(md, r.processes(), row -> row.kind().label + ", pass " + pass(r.processes(), row));
        }
        r.renewal().ifPresent(renewal -> renewalCapacity(md, renewal));
        return md.toString();
    }

    /** 1 for a competitor's first run in {@code rows}, 2 for its second... */
    private static long pass(List<ContendedScenario.Row> rows, ContendedScenario.Row row) {
        return rows.subList(0, rows.indexOf(row) + 1).stream().filter(run -> run.kind() == row.kind()).count();
    }

    private static void contendedTable(StringBuilder md, List<ContendedScenario.Row> rows) {
        contendedTable(md, rows, row -> row.kind().label);
    }

    private static void contendedTable(StringBuilder md, List<ContendedScenario.Row> rows,
            Function<ContendedScenario.Row, String> label) {
        header(md, "competitor", "T", "grants/s", "utilisation", "wait p50 ms", "wait p99 ms", "wait max ms",
                "max wait / T cycles", "Jain", "FIFO overtakes", "handoff p50 ms same / across JVM",
                "requests / grant", "failed acquires", "overlaps");
        for (ContendedScenario.Row row : rows) {
            row(md, label.apply(row), Integer.toString(row.contenders()), f1(row.grantsPerSecond()),
                    f2(row.utilisation()), f0(row.waitP50()), f0(row.waitP99()), f0(row.waitMax()),
                    f2(row.maxWaitInCycles()), f3(row.jain()), row.overtakes() + " / " + row.waitsMillis().length
                            + (row.kind().name().startsWith("DYNAMOLOCK") ? " (" + row.tokenOrderViolations() + ")" : ""),
                    orDash(row.handoffSameJvmP50()) + " / " + orDash(row.handoffCrossJvmP50()),
                    f2(row.requestsPerGrant()), Integer.toString(row.failures()), Integer.toString(row.overlaps()));
        }
    }

    /** Section 8, also what {@link RenewalCapacityMain} prints. */
    static void renewalCapacity(StringBuilder md, RenewalCapacityScenario.Result r) {
        RenewalCapacityScenario.Settings s = r.settings();
        md.append("\n## 8. Renewal capacity: one LockTemplate holds ").append(s.locks())
                .append(" locks while every renewal takes ").append(s.renewalRoundTrip().toMillis()).append(" ms\n\n");
        List<String> problems = r.problems();
        if (!problems.isEmpty()) {
            md.append("**INVALID run: ").append(String.join("; ", problems)).append(".**\n\n");
        }
        md.append("One JVM of its own (DynamoDB Local is not in it), one template with lease ")
                .append(f1(s.lease().toMillis() / 1000.0)).append(" s and heartbeat ")
                .append(f1(s.heartbeat().toMillis() / 1000.0))
                .append(" s, nobody else on the locks: a lock lost here was lost because it was not renewed in time."
                        + " A renewal is a request whose ProtocolStep is RENEW; see SlowRenewals.\n\n");
        header(md, "figure", "value");
        row(md, "locks lost: onLost callbacks / LockListener.onLost / isValid() false at the end",
                r.lostCallbacks() + " / " + r.lostListener() + " / " + r.invalid() + " of " + s.locks());
        row(md, "renewals delayed (attempts; 0 makes the run invalid)", Long.toString(r.delayedRenewals()));
        row(md, "locks taken (failed acquires), seconds to take them", r.acquired() + " (" + r.acquireFailures()
                + "), " + f1(r.acquireSeconds()) + " s");
        row(md, "renewals sent/s while holding (needed to renew every lock on time)",
                f0(r.renewalsPerSecond()) + " (" + f0(s.renewalsNeededPerSecond()) + ")");
        row(md, "live threads of the JVM: before the SDK client and template / peak while holding",
                r.threadsBefore() + " / " + r.peakThreads());
        row(md, "dynamolock-* threads, peak (of them dynamolock-request-*)",
                r.peakDynamolockThreads() + " (" + r.peakRequestThreads() + ")");
        row(md, "heap used after GC: before / all locks held (per 1,000 held locks)",
                f1(r.heapBeforeBytes() / 1e6) + " MB / " + f1(r.heapHeldBytes() / 1e6) + " MB ("
                        + f2(r.heapPerThousandBytes() / 1e6) + " MB)");
        row(md, "held for (s), HTTP connections the client allows", f0(r.windowSeconds()) + ", " + r.connections());
        row(md, "requests of step ENQUEUE (must equal the locks taken)", Long.toString(r.enqueues()));
    }

    /** E.g. {@code $1.25 (2.0 W + 0.0 R)}. */
    private static String cost(Meter meter, long acquisitions) {
        double n = Math.max(1, acquisitions);
        return "$" + f2(dollarsPerMillion(meter, acquisitions)) + " (" + f1(meter.writeUnits() / n) + " W + "
                + f1(meter.readUnits() / n) + " R)";
    }

    private static String orDash(double millis) {
        return millis == 0 ? "-" : f0(millis);
    }

    /** {@code value} with one decimal, or "-" when it is a figure of no values at all ({@code count} 0). */
    static String f1OrDash(double value, int count) {
        return count == 0 ? "-" : f1(value);
    }

    private static double waiterHourDollars(WaitingCostScenario.Row row) {
        double requests = row.meter().total();
        if (requests == 0) {
            return 0;
        }
        double perRequest = dollarsPerMillion(row.meter(), (long) requests) / 1e6;
        return row.requestsPerSecondPerWaiter() * 3600 * perRequest;
    }

    /** One bar per competitor and contender count, of {@code value}. */
    private static CategoryChart contendedChart(List<CompetitorKind> kinds, Results r, String title, String y,
            ToDoubleFunction<ContendedScenario.Row> value) {
        CategoryChart chart = categoryChart(title, "contenders T", y);
        for (CompetitorKind kind : kinds) {
            List<ContendedScenario.Row> rows = r.contended().rows().stream().filter(row -> row.kind() == kind).toList();
            chart.addSeries(kind.label, rows.stream().map(row -> "T=" + row.contenders()).toList(),
                    rows.stream().map(row -> (Number) value.applyAsDouble(row)).toList());
        }
        return chart;
    }

    private static XYChart waitChart(List<CompetitorKind> kinds, Results r) {
        XYChart chart = new XYChartBuilder().width(1000).height(560)
                .title("Wait time distribution, T=" + CHARTED_CONTENDERS + " (fraction of acquires that waited <= x)")
                .xAxisTitle("wait ms (log scale)").yAxisTitle("fraction of acquires").build();
        style(chart.getStyler());
        chart.getStyler().setXAxisLogarithmic(true).setYAxisMin(0.0).setYAxisMax(1.0);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideSE);
        for (CompetitorKind kind : kinds) {
            r.contended().rows().stream().filter(row -> row.kind() == kind && row.contenders() == CHARTED_CONTENDERS)
                    .findFirst().ifPresent(row -> {
                        double[] waits = row.waitsMillis().clone();
                        Arrays.sort(waits);
                        double[] x = new double[waits.length];
                        double[] y = new double[waits.length];
                        for (int i = 0; i < waits.length; i++) {
                            x[i] = Math.max(1, waits[i]);
                            y[i] = (i + 1.0) / waits.length;
                        }
                        if (x.length > 0) {
                            chart.addSeries(kind.label, x, y).setMarker(SeriesMarkers.NONE);
                        }
                    });
        }
        return chart;
    }

    /**
     * Scenario 7: grants and handoffs between processes per second; and each competitor's handoff p50 beside the
     * p50s of its two parts, the release's own request and the time from its answer to the next grant (how the next
     * process learns of the release). Side by side, not stacked: medians of parts do not add up to the median of
     * the whole (a hand-over's whole is far below its release's request).
     */
    static List<Chart<?, ?>> processesCharts(List<CompetitorKind> kinds, List<ContendedScenario.Row> rows) {
        // A competitor's passes as one bar: the mean of each figure.
        List<List<ContendedScenario.Row>> charted = kinds.stream()
                .map(kind -> rows.stream().filter(row -> row.kind() == kind).toList())
                .filter(runs -> !runs.isEmpty()).toList();
        List<String> labels = charted.stream().map(runs -> runs.get(0).kind().id).toList();
        CategoryChart throughput = categoryChart("T=" + ProcessesScenario.PROCESSES
                + " contenders in separate processes, 20 ms holds: per second", "", "per second");
        throughput.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
        throughput.addSeries("grants (issue 12's handoffs/s)", labels,
                means(charted, ContendedScenario.Row::grantsPerSecond));
        throughput.addSeries("handoffs between processes", labels,
                means(charted, ContendedScenario.Row::handoffsAcrossJvmsPerSecond));
        CategoryChart handoff = categoryChart("T=" + ProcessesScenario.PROCESSES
                + " in separate processes: handoff p50 and the p50 of each part", "", "ms");
        handoff.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
        handoff.addSeries("handoff: release call to the next grant", labels,
                means(charted, ContendedScenario.Row::handoffCrossJvmP50));
        handoff.addSeries("the release's own request", labels,
                means(charted, ContendedScenario.Row::releaseCrossJvmP50));
        handoff.addSeries("its answer to the next grant (< 0: before it)", labels,
                means(charted, ContendedScenario.Row::answerToGrantCrossJvmP50));
        return List.of(throughput, handoff);
    }

    private static List<Number> means(List<List<ContendedScenario.Row>> charted,
            ToDoubleFunction<ContendedScenario.Row> figure) {
        return charted.stream().map(runs -> (Number) runs.stream().mapToDouble(figure).average().orElse(0)).toList();
    }

    private static CategoryChart waitingCostChart(List<CompetitorKind> kinds, Results r) {
        CategoryChart chart = categoryChart("Waiting cost: requests/s per waiter", "waiters in the queue",
                "requests/s per waiter");
        for (CompetitorKind kind : kinds) {
            List<WaitingCostScenario.Row> rows = r.waitingCost().stream().filter(row -> row.kind() == kind).toList();
            chart.addSeries(kind.label, rows.stream().map(row -> Integer.toString(row.waiters())).toList(),
                    rows.stream().map(row -> (Number) row.requestsPerSecondPerWaiter()).toList());
        }
        return chart;
    }

    private static CategoryChart categoryChart(String title, String x, String y) {
        CategoryChart chart = new CategoryChartBuilder().width(1000).height(560).title(title).xAxisTitle(x)
                .yAxisTitle(y).build();
        style(chart.getStyler());
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        return chart;
    }

    private static void style(org.knowm.xchart.style.AxesChartStyler styler) {
        styler.setChartTitleFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
        styler.setLegendFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        styler.setAxisTitleFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
        styler.setAxisTickLabelsFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        styler.setChartBackgroundColor(java.awt.Color.WHITE);
    }

    /** A table's header row and its rule. */
    static void header(StringBuilder md, String... cells) {
        row(md, cells);
        md.append("|").append(" --- |".repeat(cells.length)).append('\n');
    }

    static void row(StringBuilder md, String... cells) {
        md.append("| ").append(String.join(" | ", cells)).append(" |\n");
    }

    static String f0(double v) {
        return String.format(Locale.ROOT, "%.0f", v);
    }

    static String f1(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    static String f2(double v) {
        return String.format(Locale.ROOT, "%.2f", v);
    }

    static String f3(double v) {
        return String.format(Locale.ROOT, "%.3f", v);
    }

    static String f4(double v) {
        return String.format(Locale.ROOT, "%.4f", v);
    }
}
