package io.dynamolock.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Scenario 4: 64 threads each lock a random one of 1,000 entities, release at once, and go again. Reports the
 * rate and the writes per item, which shows whether any item (a global counter, say) is written by every lock.
 * Also the requests per second: DynamoDB Local runs every request through one SQLite thread, so on a small
 * machine the server, not the lock, bounds the rate, and a lock's acquires/s follow from its requests per acquire.
 */
final class ManyEntitiesScenario {

    static final int ENTITIES = 1000;
    static final int THREADS = 64;

    /**
     * @param maxWritesPerItem   the most writes any one item took
     * @param meanWritesPerItem  the writes per entity item, averaged
     * @param otherItemWrites    writes to items that belong to no entity
     */
    record Row(CompetitorKind kind, double acquiresPerSecond, double requestsPerSecond, int itemsWritten, long maxWritesPerItem,
            double meanWritesPerItem, long otherItemWrites, int failures) {
    }

    private ManyEntitiesScenario() {
    }

    static List<Row> run(Env env, List<CompetitorKind> kinds) throws Exception {
        Duration length = env.options.scaled(Duration.ofSeconds(8), Duration.ofSeconds(1));
        List<Row> rows = new ArrayList<>();
        for (CompetitorKind kind : kinds) {
            String prefix = "many-" + UUID.randomUUID() + "-";
            AtomicLong acquires = new AtomicLong();
            AtomicLong failures = new AtomicLong();
            double seconds;
            try (Competitor competitor = kind.open(env.clients)) {
                env.network.reset();
                long start = System.nanoTime();
                long end = start + length.toNanos();
                List<Thread> threads = new ArrayList<>();
                for (int i = 0; i < THREADS; i++) {
                    Thread thread = new Thread(() -> {
                        while (System.nanoTime() - end < 0) {
                            String entity = prefix + ThreadLocalRandom.current().nextInt(ENTITIES);
                            try {
                                competitor.acquire(entity, Env.WAIT).release();
                                acquires.incrementAndGet();
                            }
                            catch (Exception ex) {
                                failures.incrementAndGet();
                            }
                        }
                    }, "many-" + i);
                    thread.start();
                    threads.add(thread);
                }
                for (Thread thread : threads) {
                    thread.join();
                }
                seconds = (System.nanoTime() - start) / 1e9;
            }
            Meter meter = env.network.snapshot();
            Map<String, Long> writes = env.network.writesPerItem();
            long entityWrites = 0;
            long other = 0;
            long max = 0;
            int items = 0;
            int entityItems = 0;
            for (Map.Entry<String, Long> item : writes.entrySet()) {
                if (!item.getKey().startsWith(kind.table())) {
                    continue;
                }
                items++;
                max = Math.max(max, item.getValue());
                if (item.getKey().contains(prefix)) {
                    entityWrites += item.getValue();
                    entityItems++;
                }
                else {
                    other += item.getValue();
                }
            }
            rows.add(new Row(kind, acquires.get() / seconds, meter.total() / seconds, items, max,
                    (double) entityWrites / Math.max(1, entityItems), other, (int) failures.get()));
            BenchMain.progress("many entities " + kind.id + ": " + acquires.get() + " acquires");
        }
        return rows;
    }
}
