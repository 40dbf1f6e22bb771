package io.dynamolock.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * One run of contenders on one lock, {@code local} threads in this JVM and {@code perRemote} in each worker JVM,
 * from a common start for {@code length}; then the drain (see {@link Contenders}; 30 s at most, 2 s with --quick).
 *
 * @param contenderIds every contender, {@code <process>-<thread>}
 * @param grants       all grants, drain included
 * @param from         the start of the measured window (nanoTime)
 * @param to           its end: grants after it are the drain
 * @param meter        the requests of all JVMs, drain included
 */
record ContendedRun(CompetitorKind kind, List<String> contenderIds, List<Grant> grants, long from, long to, Meter meter,
        int failures) {

    static final Duration HOLD = Duration.ofMillis(20);

    /** {@code local} contenders in this JVM and {@code remote} in the worker JVM. */
    static ContendedRun split(Env env, CompetitorKind kind, int local, int remote, Duration length) throws Exception {
        return run(env, kind, local, remote == 0 ? List.of() : List.of(env.remote), remote, length);
    }

    static ContendedRun run(Env env, CompetitorKind kind, int local, List<RemoteJvm> remotes, int perRemote,
            Duration length) throws Exception {
        return run(env, kind, local, remotes, perRemote, HOLD, false, length);
    }

    /**
     * Warm-up, not measured: every worker locks an entity of its own, without holding it, for {@code length}: some
     * hundred acquisitions each instead of a few in a contended run, so that the workers have compiled the
     * competitor's hot path before any of them is measured.
     */
    static void warmAlone(Env env, CompetitorKind kind, List<RemoteJvm> remotes, Duration length) throws Exception {
        run(env, kind, 0, remotes, 1, Duration.ZERO, true, length);
    }

    private static ContendedRun run(Env env, CompetitorKind kind, int local, List<RemoteJvm> remotes, int perRemote,
            Duration hold, boolean entityPerProcess, Duration length) throws Exception {
        String entity = "contended-" + UUID.randomUUID();
        Duration drain = env.options.scaled(Duration.ofSeconds(30), Duration.ofSeconds(2));
        for (RemoteJvm remote : remotes) {
            remote.prepare(kind, entityPerProcess ? entity + "-" + remote.number() : entity, perRemote, hold,
                    Env.WAIT, drain);
        }
        Contenders.Outcome here = new Contenders.Outcome(List.of(), 0);
        long start;
        long end;
        // No contender here: open no competitor, whose heartbeat threads would only take CPU from the workers.
        try (Competitor competitor = local == 0 ? null : kind.open(env.clients)) {
            env.network.reset();
            start = System.nanoTime() + Duration.ofMillis(300).toNanos();
            end = start + length.toNanos();
            for (RemoteJvm remote : remotes) {
                remote.go(start, end);
            }
            if (competitor != null) {
                here = Contenders.run(competitor, entity, 0, local, hold, Env.WAIT, drain, start, end);
            }
        }
        Meter meter = local == 0 ? Meter.NONE : env.network.snapshot();
        List<Grant> grants = new ArrayList<>(here.grants());
        int failures = here.failures();
        List<String> ids = new ArrayList<>(ids(0, local));
        for (RemoteJvm remote : remotes) {
            RemoteJvm.Answer there = remote.await();
            grants.addAll(there.outcome().grants());
            failures += there.outcome().failures();
            meter = meter.plus(there.meter());
            ids.addAll(ids(remote.number(), perRemote));
        }
        return new ContendedRun(kind, List.copyOf(ids), List.copyOf(grants), start, end, meter, failures);
    }

    private static List<String> ids(int process, int threads) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            ids.add(process + "-" + i);
        }
        return ids;
    }

    int contenders() {
        return contenderIds.size();
    }

    /** The grants of the measured window (not the drain). */
    List<Grant> inWindow() {
        return grants.stream().filter(g -> g.granted() - to < 0).toList();
    }

    double seconds() {
        return (to - from) / 1e9;
    }
}
