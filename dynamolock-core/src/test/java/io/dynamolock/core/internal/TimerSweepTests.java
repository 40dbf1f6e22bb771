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
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.api.Test;

/**
 * The timer's sweeps of a late enqueue (one lease, one minute and five minutes after the entry left): each is sent,
 * by its timer or by close(), whatever comes between. The tests run the timer's tasks themselves, on threads and in
 * an order of their choosing.
 */
class TimerSweepTests {

    /**
     * close() runs to its end once the timer has taken the sweep out of {@code sweeps} at its last stage (so close()
     * does not send it). The timer took it out before handing it over, so close() found nothing pending and shut the
     * threads down, and the timer's hand-over then saw them shut and dropped the sweep.
     */
    @Test
    void theLastSweepRacingWithCloseIsStillSent() throws Exception {
        Workers workers = new Workers();
        Leases leases = new Leases(null, Clock.systemUTC(), Duration.ofSeconds(10), null, workers);
        AtomicInteger sends = new AtomicInteger();
        leases.sweepLater("entry", Duration.ofSeconds(30), () -> {
            sends.incrementAndGet();
            return false;
        });
        List<Runnable> stages = timerTasks(leases);
        stages.get(0).run(); // one lease after the entry left
        stages.get(1).run(); // one minute
        CountDownLatch taken = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        Thread timer = new Thread(stages.get(2), "stands-for-the-timer"); // five minutes
        pauseAfterRemoveOn(leases, timer, taken, proceed);

        timer.start();
        assertThat(taken.await(10, TimeUnit.SECONDS)).isTrue(); // it has taken the sweep out of the pending set
        leases.close(); // the template closes now
        proceed.countDown();
        timer.join(10_000);
        workers.terminated().toCompletableFuture().get(10, TimeUnit.SECONDS);

        assertThat(sends).as("sweeps sent (by the timer or by close())").hasValue(3);
    }

    /**
     * A lease longer than five minutes: the five-minute sweep comes before the one-lease sweep, and the sweep left
     * the pending set at the five-minute one (the last in the list), so the one-lease sweep was never sent.
     */
    @Test
    void theOneLeaseSweepIsSentWhenTheLeaseIsLongerThanFiveMinutes() throws Exception {
        Workers workers = new Workers();
        Leases leases = new Leases(null, Clock.systemUTC(), Duration.ofSeconds(10), null, workers);
        AtomicInteger sends = new AtomicInteger();
        leases.sweepLater("entry", Duration.ofMinutes(10), () -> {
            sends.incrementAndGet();
            return false;
        });
        List<Runnable> stages = timerTasks(leases);
        stages.get(1).run(); // one minute after the entry left
        stages.get(2).run(); // five minutes
        stages.get(0).run(); // ten minutes: one lease
        leases.close();
        workers.terminated().toCompletableFuture().get(10, TimeUnit.SECONDS);

        assertThat(sends).as("sweeps sent: one minute, five minutes, one lease (10 min)").hasValue(3);
    }

    /**
     * Every request thread busy when the sweeps come due (a slow region: just when enqueue attempts go unanswered):
     * trySend() found no free thread and the sweeps were dropped, the last one taken out of the pending set first,
     * so close() had nothing to send either. Left pending, it is sent by close(), on its own thread while the pool
     * is still busy.
     */
    @Test
    void sweepsDueOnABusyPoolAreLeftForClose() throws Exception {
        Workers workers = new Workers();
        CountDownLatch release = BusyRequestThreads.occupy(workers);
        Leases leases = new Leases(null, Clock.systemUTC(), Duration.ofSeconds(10), null, workers);
        AtomicInteger sends = new AtomicInteger();
        leases.sweepLater("entry", Duration.ofSeconds(30), () -> {
            sends.incrementAndGet();
            return false;
        });
        try {
            timerTasks(leases).forEach(Runnable::run); // as the timer runs them, each when due
            leases.close();
        }
        finally {
            release.countDown(); // the slow requests answer
        }
        workers.terminated().toCompletableFuture().get(10, TimeUnit.SECONDS);

        assertThat(sends).as("sweeps sent (by close(): no request thread was free)").hasValue(1);
    }

    /** The same, without close(): the timer hands each over again once a request thread is free. */
    @Test
    void sweepsDueOnABusyPoolAreSentOnceAThreadIsFree() throws Exception {
        Workers workers = new Workers();
        CountDownLatch release = BusyRequestThreads.occupy(workers);
        Leases leases = new Leases(null, Clock.systemUTC(), Duration.ofSeconds(10), null, workers);
        CountDownLatch sent = new CountDownLatch(3);
        leases.sweepLater("entry", Duration.ofSeconds(30), () -> {
            sent.countDown();
            return false;
        });
        try {
            timerTasks(leases).forEach(Runnable::run);
        }
        finally {
            release.countDown();
        }
        assertThat(sent.await(10, TimeUnit.SECONDS)).as("all three sent once request threads were free").isTrue();
        leases.close();
        workers.terminated().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    /** The timer tasks sweepLater() scheduled for the one sweep pending: one lease, one minute, five minutes. */
    @SuppressWarnings("unchecked")
    private static List<Runnable> timerTasks(Leases leases) {
        try {
            Set<Object> sweeps = (Set<Object>) field(Leases.class, "sweeps").get(leases);
            Object sweep = sweeps.iterator().next();
            AtomicReferenceArray<ScheduledFuture<?>> scheduled = (AtomicReferenceArray<ScheduledFuture<?>>) field(
                    sweep.getClass(), "scheduled").get(sweep);
            assertThat(scheduled.length()).isEqualTo(3);
            assertThat(scheduled.get(2).getDelay(TimeUnit.SECONDS)).isGreaterThan(60 * 4);
            return List.of((Runnable) scheduled.get(0), (Runnable) scheduled.get(1), (Runnable) scheduled.get(2));
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
