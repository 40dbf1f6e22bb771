package io.dynamolock.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.time.Clock;
import java.time.Duration;
import java.util.AbstractSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The last (five-minute) timer sweep of a late enqueue is sent, by its timer or by close(), whatever comes between. */
class TimerSweepTests {

    /**
     * close() runs to its end once the timer has taken the five-minute sweep out of {@code sweeps} (so close() does
     * not send it). The timer took it out before handing it over, so close() found nothing pending and shut the
     * threads down, and the timer's hand-over then saw them shut and dropped the sweep.
     */
    @Test
    void theFiveMinuteSweepRacingWithCloseIsStillSent() throws Exception {
        Workers workers = new Workers();
        Leases leases = new Leases(null, Clock.systemUTC(), Duration.ofSeconds(10), null, workers);
        AtomicInteger sends = new AtomicInteger();
        leases.sweepLater("entry", Duration.ofHours(1), () -> {
            sends.incrementAndGet();
            return false;
        });
        CountDownLatch taken = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        Thread timer = new Thread(() -> lastTimerTask(leases).run(), "stands-for-the-timer");
        pauseAfterRemoveOn(leases, timer, taken, proceed);

        timer.start(); // the timer, five minutes after the entry left
        assertThat(taken.await(10, TimeUnit.SECONDS)).isTrue(); // it has taken the sweep out of the pending set
        leases.close(); // the template closes now
        proceed.countDown();
        timer.join(10_000);
        workers.terminated().toCompletableFuture().get(10, TimeUnit.SECONDS);

        assertThat(sends).as("times the five-minute sweep was sent (by its timer or by close())").hasValue(1);
    }

    /**
     * Every request thread busy when the five-minute sweep comes due (a slow region: just when enqueue attempts go
     * unanswered): the timer took the sweep out of the pending set, trySend() found no free thread, and the sweep
     * was dropped, so close() later had nothing to send either. It must stay for close(), which sends it on its own
     * thread while the pool is still busy.
     */
    @Test
    void theFiveMinuteSweepOnABusyPoolIsLeftForClose() throws Exception {
        Workers workers = new Workers();
        CountDownLatch release = occupyEveryRequestThread(workers);
        Leases leases = new Leases(null, Clock.systemUTC(), Duration.ofSeconds(10), null, workers);
        AtomicInteger sends = new AtomicInteger();
        leases.sweepLater("entry", Duration.ofHours(1), () -> {
            sends.incrementAndGet();
            return false;
        });
        try {
            lastTimerTask(leases).run(); // as the timer runs it, five minutes after the entry left
            leases.close();
        }
        finally {
            release.countDown(); // the slow requests answer
        }
        workers.terminated().toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(sends).as("times the five-minute sweep was sent (by close(): no request thread was free)")
                .hasValue(1);
    }

    /** The same, without close(): the timer hands the sweep over again once a request thread is free. */
    @Test
    void theFiveMinuteSweepOnABusyPoolIsSentOnceAThreadIsFree() throws Exception {
        Workers workers = new Workers();
        CountDownLatch release = occupyEveryRequestThread(workers);
        Leases leases = new Leases(null, Clock.systemUTC(), Duration.ofSeconds(10), null, workers);
        CountDownLatch sent = new CountDownLatch(1);
        leases.sweepLater("entry", Duration.ofHours(1), () -> {
            sent.countDown();
            return false;
        });
        try {
            lastTimerTask(leases).run();
        }
        finally {
            release.countDown();
        }
        assertThat(sent.await(10, TimeUnit.SECONDS)).as("the sweep was sent once a request thread was free").isTrue();
        leases.close();
        workers.terminated().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    /** Fills every request thread until the returned latch is counted down. */
    private static CountDownLatch occupyEveryRequestThread(Workers workers) throws InterruptedException {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch allStarted = new CountDownLatch(Workers.MAX_REQUEST_THREADS);
        for (int i = 0; i < Workers.MAX_REQUEST_THREADS; i++) {
            assertThat(workers.tryRequest(() -> {
                allStarted.countDown();
                try {
                    release.await();
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            })).isTrue();
        }
        assertThat(allStarted.await(30, TimeUnit.SECONDS)).isTrue();
        return release;
    }

    /** The timer task sweepLater() scheduled last (five minutes), to run on a thread of the test's choosing. */
    @SuppressWarnings("unchecked")
    private static Runnable lastTimerTask(Leases leases) {
        try {
            Set<Object> sweeps = (Set<Object>) field(Leases.class, "sweeps").get(leases);
            Object sweep = sweeps.iterator().next();
            List<ScheduledFuture<?>> scheduled = (List<ScheduledFuture<?>>) field(sweep.getClass(), "scheduled")
                    .get(sweep);
            assertThat(scheduled).hasSize(3);
            ScheduledFuture<?> last = scheduled.get(2);
            assertThat(last.getDelay(TimeUnit.SECONDS)).isGreaterThan(60 * 4);
            return (Runnable) last;
        }
        catch (ReflectiveOperationException ex) {
            throw new AssertionError(ex);
        }
    }

    /** A hook in {@code sweeps.remove}: on {@code thread}, after the sweep is taken out, waits for {@code proceed}. */
    @SuppressWarnings("unchecked")
    private static void pauseAfterRemoveOn(Leases leases, Thread thread, CountDownLatch taken,
            CountDownLatch proceed) throws ReflectiveOperationException {
        Field f = field(Leases.class, "sweeps");
        Set<Object> real = (Set<Object>) f.get(leases);
        f.set(leases, new AbstractSet<Object>() {
            @Override
            public boolean add(Object o) {
                return real.add(o);
            }

            @Override
            public boolean remove(Object o) {
                boolean removed = real.remove(o);
                if (removed && Thread.currentThread() == thread) {
                    taken.countDown();
                    try {
                        proceed.await(10, TimeUnit.SECONDS);
                    }
                    catch (InterruptedException ex) {
                        Thread.currentThread().interrupt();
                    }
                }
                return removed;
            }

            @Override
            public Iterator<Object> iterator() {
                return real.iterator();
            }

            @Override
            public int size() {
                return real.size();
            }
        });
    }

    private static Field field(Class<?> type, String name) throws NoSuchFieldException {
        Field f = type.getDeclaredField(name);
        f.setAccessible(true);
        return f;
    }
}
