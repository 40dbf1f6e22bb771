package io.dynamolock.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockMode;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.test.Await;
import io.dynamolock.core.test.FaultInjector;
import io.dynamolock.core.test.FaultInjector.Step;
import io.dynamolock.core.test.LockFixture;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/**
 * A request thread that cannot be started: the pool's thread factory throws an Error (OutOfMemoryError "unable to
 * create native thread", which a JVM near its thread limit throws), once. What was being handed to the thread is
 * neither lost nor turned against an entry that was just granted.
 */
@Timeout(120)
class RequestThreadStartFailureTests {

    private final LockFixture fixture = new LockFixture();

    @AfterEach
    void close() throws Exception {
        fixture.close();
    }

    /**
     * The purge beside a grant is handed to a request thread after the grant settled the wait; the Error reached the
     * step's catch, which took the entry just granted out of the queue while the caller held its handle, and no loss
     * was reported: the next caller could hold beside it.
     */
    @Test
    void anErrorStartingThePurgeBesideAGrantLeavesTheGrantedEntryHeld() throws Exception {
        String entity = "oom-purge-" + System.nanoTime();
        LockRequest shared = LockRequest.builder(entity).mode(LockMode.SHARED).wait(Duration.ofSeconds(5)).build();
        LockTemplate crashing = fixture.template();
        LockHandle dead = crashing.tryAcquire(shared).orElseThrow();
        crashing.close();
        fixture.expire(entity, dead.entryId()); // a dead reader ahead: the next reader's grant purges it beside it
        FaultInjector faults = new FaultInjector();
        LockTemplate template = fixture.template(b -> { }, faults);
        AtomicBoolean failOnce = failFirstRequestThread(template);

        LockHandle reader = template.acquire(shared);

        assertThat(failOnce).as("the Error was thrown starting the purge's thread").isFalse();
        assertThat(reader.isValid()).as("the reader's handle").isTrue();
        assertThat(fixture.queue(entity)).as("the queue, the reader's entry in it")
                .anySatisfy(e -> assertThat(e.ticket()).isEqualTo(reader.fencingToken()));
        assertThat(faults.attempts(Step.REMOVE)).as("removals sent").isZero();
        reader.release();
        assertThat(fixture.queue(entity)).noneSatisfy(e -> assertThat(e.ticket()).isEqualTo(reader.fencingToken()));
    }

    /**
     * A leaving waiter's removal took a lane slot and left the queue before its thread was started: the Error lost
     * it, and the slot. A fail-closed entry then stayed for ever (nobody could take the lock), and the template never
     * terminated.
     */
    @Test
    void anErrorStartingARemovalsThreadLosesNoRemoval() throws Exception {
        String entity = "oom-remove-" + System.nanoTime();
        LockHandle holder = fixture.template().acquire(entity, Duration.ZERO);
        // Renewals every 5 s: none in this test, so the removal is the first request thread this template starts.
        LockTemplate template = fixture.template(b -> b.leaseDuration(Duration.ofSeconds(20))
                .heartbeatInterval(Duration.ofSeconds(5)));
        AtomicBoolean failOnce = failFirstRequestThread(template);

        assertThatThrownBy(() -> template.acquire(LockRequest.builder(entity).failClosed(true)
                .wait(Duration.ofMillis(300)).build())).isInstanceOf(RuntimeException.class);

        assertThat(failOnce).as("the Error was thrown starting the removal's thread").isFalse();
        holder.release();
        template.close();
        Await.until(Duration.ofSeconds(15), "the closed template terminated, its waiter's removal sent",
                () -> template.terminated().toCompletableFuture().isDone());
        assertThat(fixture.queue(entity)).as("the queue once the holder released and the waiter left").isEmpty();
    }

    /**
     * A loss hands the library's own reaction ({@code whenLost()}: a reactive body or Kotlin block cancelled) to a
     * request thread of its own. The Error starting it escaped the loss half done: the application's lost-lease
     * callback never ran, whenLost() never completed, the waiter was not woken, and the lease keeper kept the entry's
     * deadline (a closed template never terminated).
     */
    @Test
    void anErrorStartingAReactionsThreadLeavesNoPartOfALossUndone() throws Exception {
        assertEveryPartOfALossDone(entry -> entry.markLost("the lease ran out (test)"), true);
    }

    /** As {@link #anErrorStartingAReactionsThreadLeavesNoPartOfALossUndone}, for a loss found by the release. */
    @Test
    void anErrorStartingAReactionsThreadLeavesNoPartOfALossFoundAtReleaseUndone() throws Exception {
        assertEveryPartOfALossDone(entry -> entry.lostAtRelease("gone at the release (test)"), false);
    }

    /**
     * A loss found on the lease timer (a deadline passed) whose callback could not be handed over (no
     * thread could be started) ran the application's callback, and the library's reaction, on the timer itself: a
     * blocking callback would have stopped every deadline and renewal of the template (R11, R12). They are handed over
     * again shortly instead.
     */
    @Test
    void aLossOnTheTimerWhoseCallbacksCannotBeHandedOverRunsNoneOfThemOnTheTimer() throws Exception {
        Workers workers = new Workers();
        try {
            failFirstThread(pool(workers, "requests"));
            failFirstThread(pool(workers, "reactionsWhenBusy"));
            AtomicBoolean callbackThreadFailed = failFirstThread(pool(workers, "callbacks"));
            Acquisition entry = new Acquisition(new LockKey("oom-timer", "default"), "pod", Duration.ofSeconds(60),
                    false, LockMode.EXCLUSIVE, 1, null, false, workers.callbacks(), workers.reactions());
            CompletableFuture<String> reactionThread = new CompletableFuture<>();
            entry.onLostReaction(lost -> reactionThread.complete(Thread.currentThread().getName()));
            CompletableFuture<String> callbackThread = new CompletableFuture<>();
            entry.onLost(lost -> callbackThread.complete(Thread.currentThread().getName()));

            CompletableFuture<String> timerThread = new CompletableFuture<>();
            workers.schedule(() -> {
                timerThread.complete(Thread.currentThread().getName());
                entry.markLost("the lease ran out (test)"); // as Leases.watchDeadline does
            }, 0);

            String timer = timerThread.get(5, TimeUnit.SECONDS);
            assertThat(callbackThread.get(5, TimeUnit.SECONDS)).as("the application's callback ran, not on the timer")
                    .isNotEqualTo(timer);
            assertThat(reactionThread.get(5, TimeUnit.SECONDS)).as("the reaction ran, not on the timer")
                    .isNotEqualTo(timer);
            assertThat(callbackThreadFailed).as("the Error was thrown starting the callback's thread").isFalse();
        }
        finally {
            workers.shutdown();
        }
    }

    /**
     * Registers a reaction, then the application's callback, on an entry; the next request thread fails to start;
     * {@code loss} is then run: it must not throw, and must run both (and wake the waiter if {@code wakes}).
     */
    private static void assertEveryPartOfALossDone(Consumer<Acquisition> loss, boolean wakes) throws Exception {
        Workers workers = new Workers();
        try {
            AtomicBoolean failOnce = failFirstRequestThread(workers);
            Acquisition entry = new Acquisition(new LockKey("oom-reaction", "default"), "pod", Duration.ofSeconds(60),
                    false, LockMode.EXCLUSIVE, 1, null, false, workers.callbacks(), workers.reactions());
            AtomicBoolean woken = new AtomicBoolean();
            entry.onWake(() -> woken.set(true));
            CompletableFuture<Acquisition> reaction = new CompletableFuture<>();
            entry.onLostReaction(reaction::complete);
            CountDownLatch applicationCallback = new CountDownLatch(1);
            entry.onLost(lost -> applicationCallback.countDown());

            assertThatCode(() -> loss.accept(entry)).as("the loss").doesNotThrowAnyException();

            assertThat(failOnce).as("the Error was thrown starting the reaction's thread").isFalse();
            assertThat(applicationCallback.await(5, TimeUnit.SECONDS)).as("the application's callback ran").isTrue();
            assertThat(reaction.get(5, TimeUnit.SECONDS)).as("the reaction ran").isSameAs(entry);
            assertThat(woken.get()).as("the waiter woken").isEqualTo(wakes);
        }
        finally {
            workers.shutdown();
        }
    }

    /**
     * A removal whose thread could not be started went back to its lock's queue only after its room was freed and a
     * retry scheduled: meanwhile another removal of the same lock could take that room and start first (order within
     * a lock lost exactly when threads are short). Here the retry's scheduling holds the window open (the timer's
     * first thread starting) while the next removal of the lock is sent.
     */
    @Test
    void aRemovalWhoseThreadCouldNotStartKeepsItsPlaceBeforeTheNextOfItsLock() throws Exception {
        Workers workers = new Workers();
        ExecutorService senders = Executors.newFixedThreadPool(2);
        try {
            LockKey key = new LockKey("oom-order", "default");
            RemovalLane lane = new RemovalLane(workers);
            AtomicBoolean putBackPending = new AtomicBoolean();
            CountDownLatch retryBeingScheduled = new CountDownLatch(1);
            CountDownLatch nextStarted = new CountDownLatch(1);
            delayFirstTimerThread(workers, () -> {
                putBackPending.set(true);
                retryBeingScheduled.countDown();
                try {
                    nextStarted.await(1, TimeUnit.SECONDS); // a second at most: no removal of the lock may start
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
                putBackPending.set(false);
            });
            failFirstRequestThread(workers);
            CountDownLatch firstRan = new CountDownLatch(1);
            AtomicBoolean nextStartedBeforeTheFirstWasBack = new AtomicBoolean();

            senders.execute(() -> lane.send(key, firstRan::countDown));
            assertThat(retryBeingScheduled.await(10, TimeUnit.SECONDS)).as("the first removal's thread failed")
                    .isTrue();
            senders.execute(() -> lane.send(key, () -> {
                nextStartedBeforeTheFirstWasBack.set(putBackPending.get());
                nextStarted.countDown();
            }));

            assertThat(firstRan.await(10, TimeUnit.SECONDS)).as("the first removal sent once a thread started")
                    .isTrue();
            assertThat(nextStarted.await(10, TimeUnit.SECONDS)).as("the next removal sent").isTrue();
            assertThat(nextStartedBeforeTheFirstWasBack).as("the lock's next removal started while the first was"
                    + " out of its queue").isFalse();
        }
        finally {
            senders.shutdown();
            workers.shutdown();
        }
    }

    /**
     * Under lasting thread exhaustion a removal is tried again every 20 ms, and each failure was logged at ERROR with
     * its stack trace: hundreds a minute. The first of a run is; the rest at DEBUG.
     */
    @Test
    void lastingThreadExhaustionIsLoggedAtErrorOnce() throws Exception {
        Workers workers = new Workers();
        Logger internals = (Logger) LoggerFactory.getLogger("io.dynamolock.core.internal");
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        internals.addAppender(logged);
        try {
            int failures = 5;
            CountDownLatch failed = failRequestThreads(workers, failures);
            CountDownLatch sent = new CountDownLatch(1);

            new RemovalLane(workers).send(new LockKey("oom-log", "default"), sent::countDown);

            assertThat(failed.await(10, TimeUnit.SECONDS)).as(failures + " threads failed to start").isTrue();
            assertThat(sent.await(10, TimeUnit.SECONDS)).as("the removal sent once threads start again").isTrue();
            assertThat(logged.list).filteredOn(event -> event.getLevel() == Level.ERROR)
                    .as("ERROR events for " + failures + " failed starts in a row").hasSize(1);
        }
        finally {
            internals.detachAppender(logged);
            workers.shutdown();
        }
    }

    /**
     * The timer hands a minimum hold's release to a request thread: an Error starting that thread escaped the timer
     * task, the release was never tried again, and the lock, counted as released elsewhere, stayed renewed for ever.
     */
    @Test
    void anErrorStartingAMinimumHoldsReleaseThreadStillReleasesTheLock() throws Exception {
        String entity = "oom-minhold-" + System.nanoTime();
        LockTemplate template = fixture.template(b -> b.leaseDuration(Duration.ofSeconds(20))
                .heartbeatInterval(Duration.ofSeconds(5)));
        LockHandle held = template.acquire(entity, Duration.ZERO);
        AtomicBoolean failOnce = failFirstRequestThread(template);

        held.releaseAfter(Duration.ofMillis(200));

        Await.until(Duration.ofSeconds(5), "the Error was thrown starting the release's thread",
                () -> !failOnce.get());
        Await.until(Duration.ofSeconds(12), "the lock released after its minimum hold",
                () -> fixture.queue(entity).isEmpty());
    }

    /**
     * The timer hands a renewal to a request thread: an Error starting that thread escaped the timer task, no
     * renewal was scheduled again, and a healthy lock was lost at its deadline.
     */
    @Test
    void anErrorStartingARenewalsThreadDoesNotCostTheLease() throws Exception {
        String entity = "oom-renew-" + System.nanoTime();
        FaultInjector faults = new FaultInjector();
        AtomicInteger renewed = new AtomicInteger();
        faults.onAnswer(Step.RENEW, request -> renewed.incrementAndGet());
        LockTemplate template = fixture.template(b -> b.leaseDuration(Duration.ofSeconds(3))
                .heartbeatInterval(Duration.ofSeconds(1)), faults);
        LockHandle held = template.acquire(entity, Duration.ZERO);
        AtomicBoolean failOnce = failFirstRequestThread(template);

        Await.until(Duration.ofSeconds(5), "the Error was thrown starting a renewal's thread", () -> !failOnce.get());
        int before = renewed.get();
        // Four renewals a second apart: past the 3 s lease, which only renewals kept.
        Await.until(Duration.ofSeconds(10), "renewals go on after the failed thread start",
                () -> renewed.get() >= before + 4);
        assertThat(held.wasLost()).as("lost after one failed thread start").isFalse();
        assertThat(held.isValid()).isTrue();
        held.release();
    }

    /** The next {@code count} request threads {@code workers} start fail with an Error; counted down for each. */
    private static CountDownLatch failRequestThreads(Workers workers, int count) throws Exception {
        ThreadPoolExecutor requests = pool(workers, "requests");
        ThreadFactory real = requests.getThreadFactory();
        CountDownLatch failed = new CountDownLatch(count);
        requests.setThreadFactory(runnable -> {
            synchronized (failed) {
                if (failed.getCount() > 0) {
                    failed.countDown();
                    throw new OutOfMemoryError("unable to create native thread (injected)");
                }
            }
            return real.newThread(runnable);
        });
        return failed;
    }

    /** Runs {@code meanwhile} on the thread that starts the timer's first thread, before it does. */
    private static void delayFirstTimerThread(Workers workers, Runnable meanwhile) throws Exception {
        ThreadPoolExecutor timer = pool(workers, "timer");
        ThreadFactory real = timer.getThreadFactory();
        AtomicBoolean first = new AtomicBoolean(true);
        timer.setThreadFactory(runnable -> {
            if (first.getAndSet(false)) {
                meanwhile.run();
            }
            return real.newThread(runnable);
        });
    }

    private static ThreadPoolExecutor pool(Workers workers, String name) throws Exception {
        Field field = Workers.class.getDeclaredField(name);
        field.setAccessible(true);
        return (ThreadPoolExecutor) field.get(workers);
    }


    /** The next request thread {@code template} starts fails with an Error; {@code false} once it has. */
    private static AtomicBoolean failFirstRequestThread(LockTemplate template) throws Exception {
        Field engineField = LockTemplate.class.getDeclaredField("engine");
        engineField.setAccessible(true);
        LockEngine engine = (LockEngine) engineField.get(template);
        return failFirstRequestThread(engine.workers);
    }

    /** The next request thread {@code workers} start fails with an Error; {@code false} once it has. */
    private static AtomicBoolean failFirstRequestThread(Workers workers) throws Exception {
        return failFirstThread(pool(workers, "requests"));
    }

    /** The next thread {@code pool} starts fails with an Error; {@code false} once it has. */
    private static AtomicBoolean failFirstThread(ThreadPoolExecutor pool) {
        ThreadFactory real = pool.getThreadFactory();
        AtomicBoolean failOnce = new AtomicBoolean(true);
        pool.setThreadFactory(runnable -> {
            if (failOnce.getAndSet(false)) {
                throw new OutOfMemoryError("unable to create native thread (injected)");
            }
            return real.newThread(runnable);
        });
        return failOnce;
    }
}
