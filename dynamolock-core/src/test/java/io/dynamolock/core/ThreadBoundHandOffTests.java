package io.dynamolock.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.test.FaultInjector;
import io.dynamolock.core.test.FaultInjector.Step;
import io.dynamolock.core.test.LockFixture;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A thread-bound hold whose thread ended without releasing it is no longer renewed, since nobody else may release
 * it; holds of the same entry that something else releases (a minimum hold's timer, a join from a carried scope)
 * keep it renewed.
 */
@Timeout(120)
class ThreadBoundHandOffTests {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final LockFixture fixture = new LockFixture();
    private final FaultInjector requests = new FaultInjector();

    @AfterEach
    void tearDown() throws Exception {
        fixture.close();
    }

    @Test
    void aMinimumHoldArrangedByAThreadThatEndedIsStillRenewed() throws Exception {
        LockTemplate locks = fixture.template(b -> { }, requests);
        AtomicReference<LockHandle> held = new AtomicReference<>();
        runToTheEnd(new Thread(() -> {
            LockHandle lock = locks.acquire(LockRequest.builder("min-hold").threadBound(true).wait(WAIT).build());
            held.set(lock);
            lock.releaseAfter(Duration.ofSeconds(60)); // the job is done; keep the others out for a minute
        }, "short-lived-job"));

        FaultInjector.await(requests.awaitAttempts(Step.RENEW, 2), 10);

        assertThat(held.get().isValid()).isTrue();
        assertThat(fixture.template().tryAcquire("min-hold")).as("others are kept out").isEmpty();
        held.get().release();
        assertThat(fixture.queue("min-hold")).isEmpty();
    }

    @Test
    void aJoinFromTheCarriedScopeOfAThreadThatEndedIsStillRenewed() throws Exception {
        LockTemplate locks = fixture.template(b -> { }, requests);
        AtomicReference<LockHandle> joined = new AtomicReference<>();
        runToTheEnd(new Thread(() -> locks.execute(LockRequest.builder("carried").threadBound(true).wait(WAIT)
                .build(), lock -> {
                    joined.set(locks.acquireAsync(LockRequest.builder("carried").wait(WAIT).build(),
                            locks.currentScope()).join());
                    return null;
                }), "scope-owner"));
        LockHandle join = joined.get();
        assertThat(join.isValid()).as("the join keeps the entry after the outer release").isTrue();

        FaultInjector.await(requests.awaitAttempts(Step.RENEW, 2), 10);

        assertThat(join.isValid()).isTrue();
        assertThat(fixture.template().tryAcquire("carried")).as("others are kept out").isEmpty();
        join.release();
        assertThat(fixture.queue("carried")).isEmpty();
    }

    @Test
    void aHoldLeftByItsThreadIsGivenUpOnceTheHoldsReleasedElsewhereAreGone() throws Exception {
        LockTemplate locks = fixture.template();
        AtomicReference<LockHandle> left = new AtomicReference<>();
        runToTheEnd(new Thread(() -> {
            LockHandle lock = locks.acquire(LockRequest.builder("left").threadBound(true).wait(WAIT).build());
            left.set(lock);
            // A join that any thread may release, released here: it no longer keeps the entry renewed.
            locks.inScope(lock, outer -> {
                locks.acquireAsync(LockRequest.of("left"), locks.currentScope()).join().release();
                return null;
            });
        }, "leaving-thread"));
        CountDownLatch lost = new CountDownLatch(1);
        left.get().onLost(lock -> lost.countDown());

        assertThat(lost.await(LockFixture.LEASE.toMillis() * 10, TimeUnit.MILLISECONDS)).isTrue();

        assertThat(fixture.template().tryAcquire("left")).as("the next caller gets the lock").isPresent();
    }

    @Test
    void aHoldLeftByItsThreadIsNotLookedAtInABusyLoopUntilItsLeaseEnds() throws Exception {
        LockTemplate locks = fixture.template(b -> b.leaseDuration(Duration.ofSeconds(10)));
        runToTheEnd(new Thread(() -> locks.acquire(LockRequest.builder("spin").threadBound(true).wait(WAIT).build()),
                "dies-holding"));
        long cpuBefore = leaseThreadsCpuNanos();

        // A window, not a synchronisation: it spans several renewal times (every 500 ms) and ends well before the
        // lease (10 s), so the entry is looked at, found abandoned, and looked at again meanwhile.
        Thread.sleep(3_000);

        assertThat(Duration.ofNanos(leaseThreadsCpuNanos() - cpuBefore))
                .as("CPU of the lease timer and request threads while nothing is to be renewed")
                .isLessThan(Duration.ofMillis(300));
    }

    private static long leaseThreadsCpuNanos() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("dynamolock-lease-timer-")
                        || t.getName().startsWith("dynamolock-request-"))
                .mapToLong(t -> Math.max(0, threads.getThreadCpuTime(t.getId())))
                .sum();
    }

    private static void runToTheEnd(Thread thread) throws InterruptedException {
        thread.start();
        thread.join(30_000);
        assertThat(thread.isAlive()).isFalse();
    }
}
