package io.dynamolock.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** Scenario 1: one thread acquires and releases one lock that nobody else wants. */
final class UncontendedScenario {

    record Row(CompetitorKind kind, int iterations, double acquireP50, double acquireP99, double releaseP50,
            double releaseP99, Meter meter) {

        double requestsPerCycle() {
            return (double) meter.total() / iterations;
        }
    }

    private UncontendedScenario() {
    }

    static List<Row> run(Env env, List<CompetitorKind> kinds) throws Exception {
        int iterations = env.options.quick() ? 30 : 200;
        List<Row> rows = new ArrayList<>();
        for (CompetitorKind kind : kinds) {
            String entity = "solo-" + UUID.randomUUID();
            try (Competitor competitor = kind.open(env.clients)) {
                for (int i = 0; i < 20; i++) {
                    competitor.acquire(entity, Env.WAIT).release();
                }
                env.network.reset();
                double[] acquire = new double[iterations];
                double[] release = new double[iterations];
                for (int i = 0; i < iterations; i++) {
                    long t0 = System.nanoTime();
                    Competitor.Handle lock = competitor.acquire(entity, Env.WAIT);
                    long t1 = System.nanoTime();
                    lock.release();
                    long t2 = System.nanoTime();
                    acquire[i] = (t1 - t0) / 1e6;
                    release[i] = (t2 - t1) / 1e6;
                }
                Meter meter = env.network.snapshot();
                rows.add(new Row(kind, iterations, Stats.percentile(acquire, 50), Stats.percentile(acquire, 99),
                        Stats.percentile(release, 50), Stats.percentile(release, 99), meter));
            }
            BenchMain.progress("uncontended " + kind.id);
        }
        return rows;
    }
}
