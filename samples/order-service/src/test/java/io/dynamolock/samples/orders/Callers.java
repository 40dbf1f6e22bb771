package io.dynamolock.samples.orders;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/** Callers released at once through a latch, each making its calls in turn. */
final class Callers {

    @FunctionalInterface
    interface Call {
        void make(int caller, int call) throws Exception;
    }

    private Callers() {
    }

    static void run(int callers, int callsEach, Call call) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(callers);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> running = new ArrayList<>();
            for (int c = 0; c < callers; c++) {
                int caller = c;
                running.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < callsEach; i++) {
                        call.make(caller, i);
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> each : running) {
                each.get(120, TimeUnit.SECONDS);
            }
        }
        finally {
            pool.shutdownNow();
        }
    }
}
