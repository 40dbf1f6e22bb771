package io.dynamolock.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Scenarios 2 and 3: T contenders on one lock, half in each JVM, each holding it for 20 ms and queueing again at
 * once; and the handoff latency within one JVM (2 contenders in this JVM) and across JVMs (1 + 1).
 */
final class ContendedScenario {

    static final int[] CONTENDERS = {2, 8, 32};

    /**
     * The figures of one run.
     *
     * @param grantsPerSecond    grants per second in the measured window (issue 12 calls them handoffs/s; for a lock
     *                           that gives the lock back to the process that released it, most are not handoffs)
     * @param handoffsAcrossJvms how many handoffs of the window went from one JVM to another (to a contender that was
     *                           already waiting), of which {@code handoffCrossJvmP50} is the median
     * @param releaseCrossJvmP50 of those handoffs, the median of the release's own request
     * @param answerToGrantCrossJvmP50 of those handoffs, the median from the release's answer to the next grant
     * @param holdMean           the mean hold of the window's grants, from the grant to the call to release, in ms
     * @param releaseMean        the mean of the window's releases' own requests, from the call to the answer, in ms:
     *                           with {@code holdMean}, the cycle of a lock whose next holder waits for that answer
     */
    record Row(CompetitorKind kind, int contenders, int grants, double grantsPerSecond, double utilisation,
            double waitP50, double waitP99, double waitMax, double maxWaitInCycles, double jain, int overtakes,
            int tokenOrderViolations, double handoffSameJvmP50, double handoffCrossJvmP50, int handoffsAcrossJvms,
            double releaseCrossJvmP50, double answerToGrantCrossJvmP50, double holdMean, double releaseMean,
            double requestsPerGrant, Meter meter, int failures, int overlaps, double[] waitsMillis) {

        /** Handoffs between processes per second of the window: grants that went to another JVM's waiter. */
        double handoffsAcrossJvmsPerSecond() {
            return grants == 0 ? 0 : handoffsAcrossJvms * grantsPerSecond / grants;
        }
    }

    /**
     * Handoff latencies and utilisation of the same-JVM pair run and of the cross-JVM pair run, and the grants of
     * the same-JVM run whose critical sections overlapped (must be 0; the cross-JVM run is scenario 2's T = 2 run,
     * whose row counts its own).
     */
    record Handoff(CompetitorKind kind, double[] sameJvmMillis, double sameJvmUtilisation, double[] crossJvmMillis,
            double crossJvmUtilisation, int overlaps) {
    }

    record Result(List<Row> rows, List<Handoff> handoffs) {
    }

    private ContendedScenario() {
    }

    static Result run(Env env, List<CompetitorKind> kinds) throws Exception {
        Duration length = env.options.scaled(Duration.ofSeconds(12), Duration.ofSeconds(1));
        long slack = env.options.roundTrip().toNanos();
        for (CompetitorKind kind : kinds) {
            // Warm-up, not measured: class loading and JIT in both JVMs, connection pools.
            ContendedRun.split(env, kind, 2, 2, env.options.scaled(Duration.ofSeconds(2), Duration.ofMillis(300)));
        }
        List<Row> rows = new ArrayList<>();
        List<ContendedRun> pairsAcross = new ArrayList<>();
        for (int t : CONTENDERS) {
            for (CompetitorKind kind : kinds) {
                ContendedRun run = ContendedRun.split(env, kind, t / 2, t - t / 2, length);
                rows.add(row(run, slack));
                if (System.getenv("BENCH_DUMP") != null) {
                    dump(env, run);
                }
                if (t == 2) {
                    pairsAcross.add(run);
                }
                BenchMain.progress("contended T=" + t + " " + kind.id + ": " + run.inWindow().size() + " grants");
            }
        }
        List<Handoff> handoffs = new ArrayList<>();
        Duration pairLength = env.options.scaled(Duration.ofSeconds(6), Duration.ofSeconds(1));
        for (ContendedRun across : pairsAcross) {
            ContendedRun same = ContendedRun.split(env, across.kind(), 2, 0, pairLength);
            handoffs.add(handoff(same, across));
            BenchMain.progress("handoff " + across.kind().id);
        }
        return new Result(rows, handoffs);
    }

    /** Scenario 3's figures from its same-JVM run and from scenario 2's T = 2 run, {@code across}. */
    static Handoff handoff(ContendedRun same, ContendedRun across) {
        return new Handoff(across.kind(), Stats.handoffMillis(same.inWindow(), true),
                Stats.utilisation(same.grants(), same.from(), same.to()), Stats.handoffMillis(across.inWindow(), false),
                Stats.utilisation(across.grants(), across.from(), across.to()), Stats.overlaps(same.grants()));
    }

    /** Debugging: every grant of a run, in ms from its start, to {@code <out>/grants-<kind>-T<n>.csv}. */
    private static void dump(Env env, ContendedRun run) throws java.io.IOException {
        StringBuilder csv = new StringBuilder("contender,waitStart,granted,released\n");
        run.grants().stream().sorted(java.util.Comparator.comparingLong(Grant::granted)).forEach(g -> csv
                .append(g.contender()).append(',').append((g.waitStart() - run.from()) / 1e6).append(',')
                .append((g.granted() - run.from()) / 1e6).append(',').append((g.released() - run.from()) / 1e6)
                .append('\n'));
        java.nio.file.Files.createDirectories(env.options.out());
        java.nio.file.Files.writeString(env.options.out().resolve("grants-" + run.kind().id + "-T"
                + run.contenders() + ".csv"), csv);
    }

    static Row row(ContendedRun run, long slackNanos) {
        List<Grant> window = run.inWindow();
        double[] waits = Stats.waitMillis(run.grants());
        double seconds = run.seconds();
        double cycleMillis = window.isEmpty() ? 0 : seconds * 1000 / window.size();
        double maxWait = Stats.percentile(waits, 100);
        // Handoffs of the window only: in the drain, waiters that were never let in during the window take turns,
        // not the steady state.
        double[] acrossJvms = Stats.handoffMillis(window, false);
        double[][] acrossParts = Stats.handoffPartsMillis(window, false);
        return new Row(run.kind(), run.contenders(), window.size(), window.size() / seconds,
                Stats.utilisation(run.grants(), run.from(), run.to()),
                Stats.percentile(waits, 50), Stats.percentile(waits, 99), maxWait,
                cycleMillis == 0 ? 0 : maxWait / (run.contenders() * cycleMillis),
                Stats.jain(Stats.grantsPerContender(window, run.contenderIds())),
                Stats.overtakes(run.grants(), slackNanos), Stats.tokenOrderViolations(run.grants()),
                Stats.percentile(Stats.handoffMillis(window, true), 50),
                Stats.percentile(acrossJvms, 50), acrossJvms.length,
                Stats.percentile(acrossParts[0], 50), Stats.percentile(acrossParts[1], 50),
                Stats.meanMillis(window, Grant::holdNanos), Stats.meanMillis(window, Grant::releaseNanos),
                (double) run.meter().total() / Math.max(1, run.grants().size()), run.meter(),
                run.failures(), Stats.overlaps(run.grants()), waits);
    }
}
