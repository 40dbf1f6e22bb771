package io.dynamolock.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Scenario 5: a holder (on a client of its own, not metered here) keeps the lock while 1, 10 or 100 waiters
 * queue for it; after a settling pause, the waiters' requests are counted over a window. Then the waiters are
 * interrupted and the holder lets go. A waiter granted before the holder lets go is counted: a lock that grants a
 * waiter while held would also poll less, so its figures would flatter it.
 */
final class WaitingCostScenario {

    static final int[] QUEUES = {1, 10, 100};

    /** @param grantedWhileHeld waiters granted while the holder still held the lock: must be 0 */
    record Row(CompetitorKind kind, int waiters, double requestsPerSecondPerWaiter, Meter meter, int grantedWhileHeld) {
    }

    private WaitingCostScenario() {
    }

    static List<Row> run(Env env, List<CompetitorKind> kinds) throws Exception {
        Duration settle = env.options.scaled(Duration.ofSeconds(2), Duration.ofMillis(300));
        Duration window = env.options.scaled(Duration.ofSeconds(4), Duration.ofMillis(700));
        List<Row> rows = new ArrayList<>();
        for (int waiters : QUEUES) {
            for (CompetitorKind kind : kinds) {
                String entity = "waiting-" + UUID.randomUUID();
                Meter meter;
                AtomicBoolean holderLetGo = new AtomicBoolean();
                AtomicInteger grantedWhileHeld = new AtomicInteger();
                try (Competitor holder = kind.open(env.holderClients); Competitor queue = kind.open(env.clients)) {
                    Competitor.Handle held = holder.acquire(entity, Env.WAIT);
                    ExecutorService pool = Executors.newFixedThreadPool(waiters);
                    for (int i = 0; i < waiters; i++) {
                        pool.execute(() -> {
                            try {
                                Competitor.Handle granted = queue.acquire(entity, Env.WAIT);
                                if (!holderLetGo.get()) {
                                    grantedWhileHeld.incrementAndGet();
                                }
                                granted.release();
                            }
                            catch (Exception ex) {
                                // Interrupted at the end of the window: expected.
                            }
                        });
                    }
                    Thread.sleep(settle.toMillis());
                    env.network.reset();
                    Thread.sleep(window.toMillis());
                    meter = env.network.snapshot();
                    pool.shutdownNow();
                    holderLetGo.set(true);
                    held.release();
                    pool.awaitTermination(60, TimeUnit.SECONDS);
                }
                rows.add(new Row(kind, waiters, meter.total() / (window.toNanos() / 1e9) / waiters, meter,
                        grantedWhileHeld.get()));
                BenchMain.progress("waiting cost " + waiters + " " + kind.id);
            }
        }
        return rows;
    }
}
