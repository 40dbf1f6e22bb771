package io.dynamolock.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Threads of one JVM that take turns on one lock: from {@code start} until {@code end} each acquires, works for
 * the hold time, releases and queues again at once. Acquires already waiting at {@code end} are served (the
 * drain), so slow waiters are measured rather than dropped; after {@code drain} they are interrupted and count
 * as failed.
 */
final class Contenders {

    /** Grants, and acquires that failed (timed out, or interrupted at the drain limit). */
    record Outcome(List<Grant> grants, int failures) {
    }

    private Contenders() {
    }

    static Outcome run(Competitor competitor, String entity, int jvm, int threads, Duration hold, Duration wait,
            Duration drain, long start, long end) throws InterruptedException {
        List<Grant> grants = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger failures = new AtomicInteger();
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            String contender = jvm + "-" + i;
            Thread worker = new Thread(() -> loop(competitor, entity, contender, jvm, hold, wait, start, end, grants,
                    failures), "contender-" + contender);
            worker.start();
            workers.add(worker);
        }
        long drainDeadline = end + drain.toNanos();
        for (Thread worker : workers) {
            worker.join(Math.max(1, (drainDeadline - System.nanoTime()) / 1_000_000));
            if (worker.isAlive()) {
                worker.interrupt();
                worker.join();
            }
        }
        return new Outcome(List.copyOf(grants), failures.get());
    }

    private static void loop(Competitor competitor, String entity, String contender, int jvm, Duration hold,
            Duration wait, long start, long end, List<Grant> grants, AtomicInteger failures) {
        parkUntil(start);
        boolean first = true;
        while (System.nanoTime() - end < 0 && !Thread.currentThread().isInterrupted()) {
            // All contenders start waiting at the common start; how late each thread wakes up is the harness's
            // doing (more so on a loaded machine), and would show as FIFO overtakes among the first acquires.
            long waitStart = first ? start : System.nanoTime();
            first = false;
            Competitor.Handle lock;
            try {
                lock = competitor.acquire(entity, wait);
            }
            catch (Exception ex) {
                failures.incrementAndGet();
                if (ex instanceof InterruptedException) {
                    return;
                }
                continue;
            }
            long granted = System.nanoTime();
            parkUntil(granted + hold.toNanos());
            long released = System.nanoTime();
            try {
                lock.release();
            }
            catch (Exception ex) {
                failures.incrementAndGet();
            }
            grants.add(new Grant(contender, jvm, waitStart, granted, released, System.nanoTime(), lock.token()));
        }
    }

    static void parkUntil(long nanoTime) {
        for (long left = nanoTime - System.nanoTime(); left > 0; left = nanoTime - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }
}
