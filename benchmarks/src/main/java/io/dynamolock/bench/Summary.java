package io.dynamolock.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Collectors;
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
        line(md, kinds, "two holders at once (scenarios 2, 3 and 7)", kind -> Stream.of(Integer.toString(
                Stream.concat(contended(r, kind), r.processes().stream().filter(row -> row.kind() == kind))
                        .mapToInt(ContendedScenario.Row::overlaps).sum()
                        + r.contended().handoffs().stream().filter(h -> h.kind() == kind)
                                .mapToInt(ContendedScenario.Handoff::overlaps).sum())));
        return md.toString();
    }

    /**
     * Issue 12's goals table, from the separate-process runs: grants/s, which the issue calls handoffs/s (and as a
     * multiple of AWS's lock client at its defaults), the handoffs between processes among them, handoff p50 across
     * processes, utilisation, requests per grant, Jain index and FIFO overtakes.
     */
    static String goals(List<CompetitorKind> kinds, List<ContendedScenario.Row> rows) {
        StringBuilder md = new StringBuilder("\n## Goals (issue 12): T = " + ProcessesScenario.PROCESSES
                + " contenders, each in its own process, 20 ms holds (scenario 7)\n\n");
        List<String> head = new ArrayList<>(List.of(""));
        kinds.forEach(kind -> head.add(kind.label));
        Report.header(md, head.toArray(String[]::new));
        double aws = rows.stream().filter(row -> row.kind() == CompetitorKind.AWS_DEFAULTS)
                .mapToDouble(ContendedScenario.Row::grantsPerSecond).findFirst().orElse(0);
        line(md, kinds, "grants/s, the issue's handoffs/s (x AWS lock client, defaults)", kind -> of(rows, kind)
                .map(row -> Report.f1(row.grantsPerSecond())
                        + (aws > 0 ? " (" + Report.f2(row.grantsPerSecond() / aws) + "x)" : "")));
        line(md, kinds, "of them handoffs between processes, per second", kind -> of(rows, kind)
                .map(row -> Report.f1(row.handoffsAcrossJvmsPerSecond())));
        line(md, kinds, "handoff p50 ms across processes (handoffs)", kind -> of(rows, kind)
                .map(row -> Report.f1OrDash(row.handoffCrossJvmP50(), row.handoffsAcrossJvms()) + " ("
                        + row.handoffsAcrossJvms() + ")"));
        line(md, kinds, "p50 of its parts, ms: the release's request / its answer to the next grant"
                + " (negative: granted before the answer)", kind -> of(rows, kind)
                .map(row -> Report.f1OrDash(row.releaseCrossJvmP50(), row.handoffsAcrossJvms()) + " / "
                        + Report.f1OrDash(row.answerToGrantCrossJvmP50(), row.handoffsAcrossJvms())));
        line(md, kinds, "lock utilisation", kind -> of(rows, kind).map(row -> Report.f2(row.utilisation())));
        // A waiter that learns of a release from DynamoDB learns of it after its write has landed and an answer has
        // come back: at best as the releaser learns it, one round trip after the call. That bounds every lock whose
        // next holder waits for the release to land; a hand-over (authenticated hints) does not wait for it.
        line(md, kinds, "bound if the next holder waits for the release's request: utilisation / grants/s (x AWS)",
                kind -> of(rows, kind).map(row -> bound(row, aws)));
        line(md, kinds, "requests per grant", kind -> of(rows, kind).map(row -> Report.f2(row.requestsPerGrant())));
        line(md, kinds, "Jain index / FIFO overtakes (share of grants)", kind -> of(rows, kind)
                .map(row -> Report.f3(row.jain()) + " / "
                        + Report.f0(100.0 * row.overtakes() / Math.max(1, row.waitsMillis().length)) + "%"));
        return md.toString();
    }

    private static String bound(ContendedScenario.Row row, double aws) {
        if (row.handoffsAcrossJvms() == 0) {
            return "-"; // no handoff, so no release's request measured
        }
        double hold = ContendedRun.HOLD.toNanos() / 1e6;
        double cycle = hold + row.releaseCrossJvmP50();
        return Report.f2(hold / cycle) + " / " + Report.f1(1000 / cycle)
                + (aws > 0 ? " (" + Report.f2(1000 / cycle / aws) + "x)" : "");
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
