package io.dynamolock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dynamolock.core.test.Await;
import io.dynamolock.core.test.FaultInjector;
import io.dynamolock.core.test.LockFixture;
import io.dynamolock.core.test.RecordingListener;
import io.dynamolock.core.test.PausingInterceptor;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The contract of {@link LockTemplate#acquireAsync} beyond the cases {@code LockTemplateContractTests} runs for
 * both ways of waiting (FIFO, time-out, crash takeover, lost lease): what cancelling it does, the failures it
 * reports, explicit scopes, and how few threads many waiters take. Against DynamoDB Local; steps are ordered with latches and
 * hooks, never with sleeps.
 */
@Timeout(120)
class AsyncAcquireContractTests {

    private static final Duration WAIT = Duration.ofSeconds(60);

    private final LockFixture fixture = new LockFixture();

    @AfterEach
    void tearDown() throws Exception {
        fixture.close();
    }

    @Test
    void uncontendedAsyncAcquireIsGrantedAndReleasedLikeABlockingOne() throws Exception {
        LockTemplate locks = fixture.template();
        LockHandle lock = locks.acquireAsync(request("a-1", WAIT)).get(30, TimeUnit.SECONDS);
        assertThat(lock.isValid()).isTrue();
        assertThat(fixture.queue("a-1")).singleElement()
                .satisfies(entry -> assertThat(entry.ticket()).isEqualTo(lock.fencingToken()));
        lock.release();
        assertThat(fixture.queue("a-1")).isEmpty();
    }

    @Test
    void listenersHearTheOutcomeAndATimeOutNamesNoThread() {
        RecordingListener recorder = new RecordingListener();
        List<String> events = recorder.events();
        LockTemplate locks = fixture.template(b -> b.listener(recorder));
        fixture.template().acquire("a-3", Duration.ofSeconds(5));

        assertThatThrownBy(() -> locks.acquireAsync(request("a-3", Duration.ofMillis(300))).get(30, TimeUnit.SECONDS))
                .cause().isInstanceOf(LockWaitTimeoutException.class)
                .as("no thread waited: no hint about one").message().doesNotContain("this thread");
        assertThat(events).containsExactly("acquiring a-3", "not acquired a-3");
    }

    @Test
    void cancellingAWaitRemovesTheEntryAndTheNextCallerIsGrantedAtOnce() throws Exception {
        RecordingListener recorder = new RecordingListener();
        List<String> events = recorder.events();
        // Polls so rare that only an entry that really left lets the next caller in within the test's time.
        LockTemplate locks = fixture.template(b -> b.pollInterval(Duration.ofSeconds(50), Duration.ofSeconds(50))
                .listener(recorder));
        LockHandle holder = locks.acquire("a-4", Duration.ofSeconds(5));
        CompletableFuture<LockHandle> cancelled = locks.acquireAsync(request("a-4", WAIT));
        fixture.awaitQueueLength("a-4", 2);
        CompletableFuture<LockHandle> next = locks.acquireAsync(request("a-4", WAIT));
        fixture.awaitQueueLength("a-4", 3);

        assertThat(cancelled.cancel(true)).isTrue();
        Await.until(Duration.ofSeconds(30), "the cancelled entry left the queue", () -> fixture.queue("a-4").size() == 2);
        holder.release();
        LockHandle lock = next.get(20, TimeUnit.SECONDS);
        assertThat(fixture.queue("a-4")).singleElement()
                .satisfies(entry -> assertThat(entry.ticket()).isEqualTo(lock.fencingToken()));
        lock.release();
        assertThat(events).contains("failed a-4 CancellationException");
    }

    @Test
    void aFutureThatTimesOutOnItsOwnLeavesTheQueue() {
        LockTemplate locks = fixture.template();
        LockHandle holder = fixture.template().acquire("a-5", Duration.ofSeconds(5));
        CompletableFuture<LockHandle> waiter = locks.acquireAsync(request("a-5", WAIT)).orTimeout(300, TimeUnit.MILLISECONDS);

        assertThatThrownBy(() -> waiter.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(java.util.concurrent.TimeoutException.class);
        Await.until(Duration.ofSeconds(30), "the abandoned entry left the queue", () -> fixture.queue("a-5").size() == 1);
        assertThat(fixture.queue("a-5")).extracting(QueueSnapshot.Entry::owner).containsExactly(holder.owner());
    }

    @Test
    void cancellingWhileTheEnqueueIsInFlightRemovesTheEntryOnceItLands() throws Exception {
        PausingInterceptor enqueueAnswer = new PausingInterceptor("UpdateItem", PausingInterceptor.Point.AFTER_ANSWER);
        LockTemplate locks = fixture.template(b -> { }, enqueueAnswer);
        LockHandle holder = fixture.template().acquire("a-6", Duration.ofSeconds(5));
        enqueueAnswer.arm();
        CompletableFuture<LockHandle> waiter = locks.acquireAsync(request("a-6", WAIT));
        enqueueAnswer.awaitPaused();

        assertThat(waiter.cancel(true)).isTrue();
        assertThat(fixture.queue("a-6")).as("the enqueue landed; its answer is held").hasSize(2);
        enqueueAnswer.resume();
        Await.until(Duration.ofSeconds(30), "the entry left once its enqueue answered", () -> fixture.queue("a-6").size() == 1);
        assertThat(fixture.queue("a-6")).extracting(QueueSnapshot.Entry::ticket).containsExactly(holder.fencingToken());
        assertThat(locks.activeLocks()).isEmpty();
    }

    @Test
    void aGrantThatRacesWithACancelIsReleased() throws Exception {
        AtomicReference<CompletableFuture<LockHandle>> waiter = new AtomicReference<>();
        CountDownLatch raced = new CountDownLatch(1);
        // The listener runs after the grant and before the future completes: cancel exactly there.
        LockTemplate locks = fixture.template(b -> b.listener(new LockListener() {
            @Override
            public void onAcquired(LockAttempt attempt, LockHandle lock, Duration waited) {
                CompletableFuture<LockHandle> future = waiter.get();
                if (future != null && future.cancel(true)) {
                    raced.countDown();
                }
            }
        }));
        LockHandle holder = fixture.template().acquire("a-7", Duration.ofSeconds(5));
        waiter.set(locks.acquireAsync(request("a-7", WAIT)));
        fixture.awaitQueueLength("a-7", 2);
        holder.release();

        assertThat(raced.await(30, TimeUnit.SECONDS)).isTrue();
        Await.until(Duration.ofSeconds(30), "the grant nobody took was released", () -> fixture.queue("a-7").isEmpty());
        assertThat(waiter.get()).isCancelled();
        assertThat(locks.activeLocks()).isEmpty();
    }

    @Test
    void aFailureFailsTheFutureAndLeavesNoEntry() {
        LockTemplate locks = fixture.template(b -> b.maxQueueLength(1));
        LockHandle holder = fixture.template().acquire("a-8", Duration.ofSeconds(5));
        assertThatThrownBy(() -> locks.acquireAsync(request("a-8", WAIT)).get(30, TimeUnit.SECONDS))
                .cause().isInstanceOf(LockQueueFullException.class);
        assertThat(fixture.queue("a-8")).extracting(QueueSnapshot.Entry::owner).containsExactly(holder.owner());

        LockTemplate noTable = fixture.template(b -> b.tableName("no-such-table"));
        assertThatThrownBy(() -> noTable.acquireAsync(request("a-8", WAIT)).get(30, TimeUnit.SECONDS))
                .cause().isInstanceOf(LockTableException.class);
        assertThatThrownBy(() -> locks.acquireAsync(LockRequest.of(" "))).as("bad input, before any request")
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void closingTheTemplateEndsItsWaitsAndTheirEntriesLeave() {
        LockTemplate locks = fixture.template();
        LockHandle holder = fixture.template().acquire("a-11", Duration.ofSeconds(5));
        CompletableFuture<LockHandle> waiter = locks.acquireAsync(request("a-11", LockRequest.WAIT_FOREVER));
        Await.until(Duration.ofSeconds(30), "the waiter is queued", () -> fixture.queue("a-11").size() == 2);

        locks.close();
        assertThatThrownBy(() -> waiter.get(30, TimeUnit.SECONDS)).cause()
                .isInstanceOf(DynamoLockException.class).hasMessageContaining("closed");
        assertThat(fixture.queue("a-11")).extracting(QueueSnapshot.Entry::owner).containsExactly(holder.owner());
        assertThatThrownBy(() -> locks.acquireAsync(request("a-11", WAIT))).isInstanceOf(IllegalStateException.class);
    }

    // ---- R10: lexical re-entry through an explicit scope ----

    @Test
    void aScopeThatHoldsTheLockIsJoinedAndNothingElseIs() throws Exception {
        LockTemplate locks = fixture.template();
        LockHandle outer = locks.acquireAsync(request("a-12", WAIT)).get(30, TimeUnit.SECONDS);
        LockScope scope = LockScope.empty().with(outer);

        LockHandle joined = locks.acquireAsync(request("a-12", WAIT), scope).get(30, TimeUnit.SECONDS);
        assertThat(joined.fencingToken()).as("the same entry").isEqualTo(outer.fencingToken());
        joined.release();
        assertThat(outer.isValid()).as("only the outermost release gives it up").isTrue();

        assertThatThrownBy(() -> locks.acquireAsync(request("a-12", LockRequest.NO_WAIT)).get(30, TimeUnit.SECONDS))
                .as("no scope: queues, even on the thread that took it").cause()
                .isInstanceOf(LockWaitTimeoutException.class);
        LockRequest notReentrant = LockRequest.builder("a-12").wait(LockRequest.NO_WAIT).reentrant(false).build();
        assertThatThrownBy(() -> locks.acquireAsync(notReentrant, scope).get(30, TimeUnit.SECONDS))
                .cause().isInstanceOf(LockWaitTimeoutException.class);
        assertThatThrownBy(() -> fixture.template().acquireAsync(request("a-12", LockRequest.NO_WAIT), scope)
                .get(30, TimeUnit.SECONDS)).as("another template's handle is not joined").cause()
                .isInstanceOf(LockWaitTimeoutException.class);
        assertThat(fixture.queue("a-12")).hasSize(1);

        outer.release();
        LockHandle again = locks.acquireAsync(request("a-12", WAIT), scope).get(30, TimeUnit.SECONDS);
        assertThat(again.fencingToken()).as("a released lock of the scope is queued for anew")
                .isGreaterThan(outer.fencingToken());
        again.release();
    }

    /** The scope's own handle released, the entry lives on under a join handed to other work: queue, not join. */
    @Test
    void aScopeWhoseHandleWasReleasedQueuesThoughAJoinOfItStillHoldsTheEntry() throws Exception {
        LockTemplate locks = fixture.template();
        LockHandle outer = locks.acquire("a-12b", Duration.ofSeconds(5));
        LockScope scope = LockScope.empty().with(outer);
        LockHandle joined = locks.acquireAsync(request("a-12b", WAIT), scope).get(30, TimeUnit.SECONDS);
        outer.release();
        assertThat(outer.isValid()).isFalse();

        CompletableFuture<LockHandle> late = locks.acquireAsync(request("a-12b", LockRequest.NO_WAIT), scope);
        try {
            assertThatThrownBy(() -> late.get(30, TimeUnit.SECONDS))
                    .as("the scope's handle was released: queued, it finds the lock taken by the join").cause()
                    .isInstanceOf(LockWaitTimeoutException.class);
        }
        finally {
            late.thenAccept(LockHandle::release);
            joined.release();
        }
        assertThat(fixture.queue("a-12b")).isEmpty();
    }

    @Test
    void aScopeWhoseLockWasLostFailsTheJoin() throws Exception {
        LockTemplate locks = fixture.template();
        LockHandle lock = locks.acquire("a-13", Duration.ofSeconds(5));
        CountDownLatch lost = new CountDownLatch(1);
        lock.onLost(handle -> lost.countDown());
        fixture.purge(lock);
        assertThat(lost.await(LockFixture.HEARTBEAT.toMillis() * 2 + 2_000, TimeUnit.MILLISECONDS)).isTrue();

        CompletableFuture<LockHandle> join = locks.acquireAsync(request("a-13", WAIT), LockScope.empty().with(lock));
        assertThatThrownBy(() -> join.get(30, TimeUnit.SECONDS)).cause().isInstanceOf(LockLostException.class)
                .hasMessageContaining("lease was lost");
        assertThat(fixture.queue("a-13")).as("nothing was queued").isEmpty();
        lock.release();
    }

    @Test
    void theScopeOfExecuteIsTheSameValueAsAnExplicitOne() throws Exception {
        LockTemplate locks = fixture.template();
        assertThat(locks.currentScope().isEmpty()).isTrue();
        locks.execute(request("a-14", WAIT), outer -> {
            LockScope scope = locks.currentScope();
            assertThat(scope.locks()).containsExactly(outer);
            LockHandle joined = locks.acquireAsync(request("a-14", WAIT), scope).get(30, TimeUnit.SECONDS);
            assertThat(joined.fencingToken()).isEqualTo(outer.fencingToken());
            joined.release();
            assertThatThrownBy(() -> locks.acquireAsync(request("a-14", LockRequest.NO_WAIT)).get(30, TimeUnit.SECONDS))
                    .as("without the scope nothing is joined, even inside execute").cause()
                    .isInstanceOf(LockWaitTimeoutException.class);
            return null;
        });
        assertThat(locks.currentScope().isEmpty()).as("the scope ends with the callback").isTrue();
        assertThat(fixture.queue("a-14")).isEmpty();
    }

    // ---- waiting holds no thread ----

    @Test
    void manyAsyncWaitersAreServedInTicketOrderOnABoundedNumberOfThreads() throws Exception {
        int waiters = 200;
        // Long leases and rare polls: the same-JVM handoff grants, and the table is not flooded with reads.
        LockTemplate locks = fixture.template(b -> b.leaseDuration(Duration.ofSeconds(60))
                .heartbeatInterval(Duration.ofSeconds(30)).pollInterval(Duration.ofSeconds(2), Duration.ofSeconds(10))
                .maxQueueLength(waiters + 1));
        LockHandle holder = locks.acquire("a-15", Duration.ofSeconds(5));
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        int before = threads.getThreadCount();
        AtomicInteger peak = new AtomicInteger(before);
        CountDownLatch done = new CountDownLatch(waiters);
        Thread sampler = new Thread(() -> {
            while (done.getCount() > 0) {
                peak.accumulateAndGet(threads.getThreadCount(), Math::max);
                java.util.concurrent.locks.LockSupport.parkNanos(2_000_000);
            }
        });
        sampler.setDaemon(true);
        sampler.start();

        List<Long> grantOrder = new CopyOnWriteArrayList<>();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        List<CompletableFuture<Void>> futures = new ArrayList<>();
        for (int i = 0; i < waiters; i++) {
            futures.add(locks.acquireAsync(request("a-15", WAIT)).thenAccept(lock -> {
                if (inside.incrementAndGet() != 1) {
                    overlaps.incrementAndGet();
                }
                grantOrder.add(lock.fencingToken());
                inside.decrementAndGet();
                lock.release();
                done.countDown();
            }));
        }
        fixture.awaitQueueLength("a-15", waiters + 1);
        assertThat(futures).noneMatch(CompletableFuture::isDone);
        holder.release();
        CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(90, TimeUnit.SECONDS);
        sampler.join(5_000);

        assertThat(grantOrder).hasSize(waiters).isSorted().doesNotHaveDuplicates();
        assertThat(overlaps.get()).isZero();
        // A thread per waiter (the blocking design) would add 200; the waits here share a few step threads, and
        // the in-process DynamoDB Local adds its own connection threads.
        assertThat(peak.get() - before).as("threads added while %d acquisitions waited (before: %d)", waiters, before)
                .isLessThan(waiters / 3);
        assertThat(fixture.queue("a-15")).isEmpty();
    }

    private static LockRequest request(String entity, Duration wait) {
        return LockRequest.builder(entity).wait(wait).build();
    }
}
