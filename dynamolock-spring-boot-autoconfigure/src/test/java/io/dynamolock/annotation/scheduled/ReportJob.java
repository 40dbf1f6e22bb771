package io.dynamolock.annotation.scheduled;

import io.dynamolock.annotation.QueueLocked;
import io.dynamolock.annotation.WaitTimeoutPolicy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.scheduling.annotation.Scheduled;

/** A job every instance schedules and only one at a time may run. */
public class ReportJob {

    @Scheduled(fixedRate = 50)
    @QueueLocked(entity = "'nightly-report'", maxWait = "0", onWaitTimeout = WaitTimeoutPolicy.SKIP, minHold = "400ms")
    public void report() {
        Runs.current().run();
    }

    /** What the instances of one test did, shared by them (they run in one JVM). */
    public static final class Runs {

        private static volatile Runs current;

        private final AtomicInteger inside = new AtomicInteger();
        private final AtomicInteger overlaps = new AtomicInteger();
        private final AtomicInteger skipEvents = new AtomicInteger();
        private final List<Long> starts = new CopyOnWriteArrayList<>();
        private final CountDownLatch expected;
        private volatile CountDownLatch skipWhileRunning = new CountDownLatch(0);

        private Runs(int expectedRuns) {
            this.expected = new CountDownLatch(expectedRuns);
        }

        public static Runs reset(int expectedRuns) {
            current = new Runs(expectedRuns);
            return current;
        }

        static Runs current() {
            return current;
        }

        /**
         * Stays inside until another instance's tick has come and skipped (5 s at most): without the lock, that tick
         * would run in here too, and count as an overlap.
         */
        void run() {
            CountDownLatch skip = new CountDownLatch(1);
            skipWhileRunning = skip;
            if (inside.incrementAndGet() != 1) {
                overlaps.incrementAndGet();
            }
            starts.add(System.nanoTime());
            try {
                skip.await(5, TimeUnit.SECONDS);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            inside.decrementAndGet();
            expected.countDown();
        }

        void skipped() {
            skipEvents.incrementAndGet();
            skipWhileRunning.countDown();
        }

        public boolean awaitRuns(long timeout, TimeUnit unit) throws InterruptedException {
            return expected.await(timeout, unit);
        }

        public int overlaps() {
            return overlaps.get();
        }

        public int skipEvents() {
            return skipEvents.get();
        }

        /** The time between the starts of consecutive runs, whichever instance ran them. */
        public List<Long> gapsBetweenStartsMillis() {
            List<Long> gaps = new ArrayList<>();
            for (int i = 1; i < starts.size(); i++) {
                gaps.add(TimeUnit.NANOSECONDS.toMillis(starts.get(i) - starts.get(i - 1)));
            }
            return gaps;
        }
    }
}
