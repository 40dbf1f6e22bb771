package io.dynamolock.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Not measured: 8 threads lock and release random entities with every competitor, so that DynamoDB Local and
 * this JVM have compiled their hot paths before the first figure is taken. The worker JVM warms up in the
 * contended scenario's own warm-up run.
 */
final class Warmup {

    private Warmup() {
    }

    static void run(Env env, List<CompetitorKind> kinds) throws InterruptedException {
        Duration each = env.options.scaled(Duration.ofSeconds(2), Duration.ofMillis(300));
        for (CompetitorKind kind : kinds) {
            try (Competitor competitor = kind.open(env.clients)) {
                long end = System.nanoTime() + each.toNanos();
                List<Thread> threads = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    Thread thread = new Thread(() -> {
                        while (System.nanoTime() - end < 0) {
                            try {
                                competitor.acquire("warmup-" + ThreadLocalRandom.current().nextInt(100), Env.WAIT)
                                        .release();
                            }
                            catch (Exception ex) {
                                return;
                            }
                        }
                    });
                    thread.start();
                    threads.add(thread);
                }
                for (Thread thread : threads) {
                    thread.join();
                }
            }
        }
        BenchMain.progress("warmed up");
    }
}
