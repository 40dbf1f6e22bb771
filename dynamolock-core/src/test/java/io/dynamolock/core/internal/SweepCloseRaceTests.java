package io.dynamolock.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class SweepCloseRaceTests {

    /** sweepLater() racing with close(): its sweep must be sent (by close(), or at once after it), never dropped. */
    @Test
    void aSweepRegisteredDuringCloseIsSent() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        int dropped = 0;
        try {
            for (int t = 0; t < 20_000; t++) {
                Workers workers = new Workers();
                Leases leases = new Leases(null, Clock.systemUTC(), Duration.ofSeconds(10), null, workers);
                AtomicInteger sends = new AtomicInteger();
                CyclicBarrier start = new CyclicBarrier(2);
                Future<?> a = pool.submit(() -> {
                    start.await();
                    leases.sweepLater("entry", Duration.ofHours(1), () -> {
                        sends.incrementAndGet();
                        return false;
                    });
                    return null;
                });
                Future<?> b = pool.submit(() -> {
                    start.await();
                    leases.close();
                    return null;
                });
                a.get(10, TimeUnit.SECONDS);
                b.get(10, TimeUnit.SECONDS);
                workers.terminated().get(10, TimeUnit.SECONDS);
                if (sends.get() == 0) {
                    dropped++;
                }
            }
        }
        finally {
            pool.shutdownNow();
        }
        assertThat(dropped).as("trials in which the sweep was never sent").isZero();
    }

    /**
     * shutDownIfDone() reads sweepsInFlight == 0, then shuts down; a trySend() in between is accepted by the still
     * open request pool and is in flight when terminated() completes (the owner closes the client then).
     */
    @Test
    void terminatedNeverCompletesWhileACountedSweepIsInFlight() throws Exception {
        int hits = 0;
        for (int trial = 0; trial < 5 && hits == 0; trial++) {
            Workers workers = new Workers();
            Field f = Workers.class.getDeclaredField("timer");
            f.setAccessible(true);
            ScheduledThreadPoolExecutor timer = (ScheduledThreadPoolExecutor) f.get(workers);
            for (int i = 0; i < 2_000_000; i++) { // a long timer queue: its shutdown() takes a while
                workers.schedule(() -> { }, TimeUnit.HOURS.toNanos(1));
            }
            Leases leases = new Leases(null, Clock.systemUTC(), Duration.ofSeconds(10), null, workers);
            CountDownLatch firstSent = new CountDownLatch(1);
            CountDownLatch answerFirst = new CountDownLatch(1);
            leases.sweepLater("first", Duration.ofHours(1), () -> {
                firstSent.countDown();
                try {
                    answerFirst.await(10, TimeUnit.SECONDS);
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
                return false;
            });
            leases.close(); // sends "first" on a request thread, which holds the threads
            assertThat(firstSent.await(10, TimeUnit.SECONDS)).isTrue();
            answerFirst.countDown(); // its answer: sweepsInFlight 0, shutDownIfDone() shuts down
            while (!timer.isShutdown()) {
                Thread.onSpinWait();
            }
            AtomicBoolean onRequestThread = new AtomicBoolean();
            AtomicBoolean terminatedWhileInFlight = new AtomicBoolean();
            // A sweep counted by trySend() now (as a timer's sweep or a late release's would be).
            leases.sweepLater("second", Duration.ofHours(1), () -> {
                onRequestThread.set(Thread.currentThread().getName().startsWith("dynamolock-request-"));
                boolean doneAtStart = workers.terminated().isDone();
                try {
                    workers.terminated().get(5, TimeUnit.SECONDS);
                    terminatedWhileInFlight.set(!doneAtStart);
                }
                catch (Exception timeout) {
                    // terminated() waited for this sweep: correct
                }
                return false;
            });
            workers.terminated().get(20, TimeUnit.SECONDS);
            if (onRequestThread.get() && terminatedWhileInFlight.get()) {
                hits++;
            }
        }
        assertThat(hits).as("terminated() completed while a sweep counted in sweepsInFlight was in flight").isZero();
    }
}
