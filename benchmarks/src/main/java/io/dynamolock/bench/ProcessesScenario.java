package io.dynamolock.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Scenario 7: T = 8 contenders on one lock, each in a JVM of its own (the worker JVM and seven more), each holding
 * the lock for 20 ms and queueing again at once: every handoff crosses processes, as between the instances of a
 * service. The figures of issue 12's goals table come from here.
 *
 * <p>The workers keep compiling while the scenario runs (a few requests a second each in a contended run), so
 * whoever is measured first meets slower requests: every worker first locks an entity of its own with every
 * competitor, then each competitor is measured twice, in the given order and then in the reverse one. A drift
 * along the run then costs each competitor as much as it gains, and the ratios of a pass compare competitors
 * measured in it.
 */
final class ProcessesScenario {

    static final int PROCESSES = 8;

    private ProcessesScenario() {
    }

    static List<ContendedScenario.Row> run(Env env, List<CompetitorKind> kinds) throws Exception {
        Duration length = env.options.scaled(Duration.ofSeconds(12), Duration.ofSeconds(1));
        List<RemoteJvm> started = new ArrayList<>();
        try {
            // Started together, they boot in parallel; each is ready once it answers its first command.
            for (int number = 2; number <= PROCESSES; number++) {
                started.add(new RemoteJvm(env.endpoint, env.options.roundTrip(), number));
            }
            List<RemoteJvm> processes = new ArrayList<>(List.of(env.remote));
            processes.addAll(started);
            Duration warmUp = env.options.scaled(Duration.ofSeconds(2), Duration.ofMillis(300));
            for (CompetitorKind kind : kinds) {
                // Warm-up, not measured: class loading and JIT in every process, alone and then contended.
                ContendedRun.warmAlone(env, kind, processes, warmUp);
                ContendedRun.run(env, kind, 0, processes, 1, warmUp);
            }
            BenchMain.progress(PROCESSES + " processes warmed up");
            List<ContendedScenario.Row> rows = new ArrayList<>();
            List<CompetitorKind> reversed = new ArrayList<>(kinds);
            Collections.reverse(reversed);
            for (List<CompetitorKind> pass : List.of(kinds, reversed)) {
                for (CompetitorKind kind : pass) {
                    ContendedRun run = ContendedRun.run(env, kind, 0, processes, 1, length);
                    rows.add(ContendedScenario.row(run, env.options.roundTrip().toNanos()));
                    BenchMain.progress("processes T=" + PROCESSES + " " + kind.id + ": " + run.inWindow().size()
                            + " grants");
                }
            }
            return rows;
        }
        finally {
            // Each takes a few seconds to shut its clients down; in parallel, not one after another.
            started.forEach(RemoteJvm::exit);
            for (RemoteJvm process : started) {
                process.close();
            }
        }
    }
}
