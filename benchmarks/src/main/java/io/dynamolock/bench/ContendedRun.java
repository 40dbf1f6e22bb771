package io.dynamolock.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.IntStream;

/**
 * One run of contenders on one lock, {@code local} threads in this JVM and {@code remote} in the worker JVM,
 * from a common start for {@code length}; then the drain (see {@link Contenders}; 30 s at most, 2 s with --quick).
 *
 * @param grants all grants, drain included
 * @param from   the start of the measured window (nanoTime)
 * @param to     its end: grants after it are the drain
 * @param meter  the requests of both JVMs, drain included
 */
record ContendedRun(CompetitorKind kind, int local, int remote, List<Grant> grants, long from, long to, Meter meter,
        int failures) {

    static final Duration HOLD = Duration.ofMillis(20);

    static ContendedRun run(Env env, CompetitorKind kind, int local, int remote, Duration length) throws Exception {
        String entity = "contended-" + UUID.randomUUID();
        Duration drain = env.options.scaled(Duration.ofSeconds(30), Duration.ofSeconds(2));
        Contenders.Outcome here;
        Meter meter;
        long start;
        long end;
        try (Competitor competitor = kind.open(env.client)) {
            if (remote > 0) {
                env.remote.prepare(kind, entity, remote, HOLD, Env.WAIT, drain);
            }
            env.network.reset();
            start = System.nanoTime() + Duration.ofMillis(300).toNanos();
            end = start + length.toNanos();
            if (remote > 0) {
                env.remote.go(start, end);
            }
            here = Contenders.run(competitor, entity, 0, local, HOLD, Env.WAIT, drain, start, end);
        }
        meter = env.network.snapshot();
        List<Grant> grants = new ArrayList<>(here.grants());
        int failures = here.failures();
        if (remote > 0) {
            RemoteJvm.Answer there = env.remote.await();
            grants.addAll(there.outcome().grants());
            failures += there.outcome().failures();
            meter = meter.plus(there.meter());
        }
        return new ContendedRun(kind, local, remote, List.copyOf(grants), start, end, meter, failures);
    }

    int contenders() {
        return local + remote;
    }

    List<String> contenderIds() {
        List<String> ids = new ArrayList<>();
        IntStream.range(0, local).forEach(i -> ids.add("0-" + i));
        IntStream.range(0, remote).forEach(i -> ids.add("1-" + i));
        return ids;
    }

    /** The grants of the measured window (not the drain). */
    List<Grant> inWindow() {
        return grants.stream().filter(g -> g.granted() - to < 0).toList();
    }

    double seconds() {
        return (to - from) / 1e9;
    }
}
