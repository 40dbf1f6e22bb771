package io.dynamolock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dynamolock.core.test.Await;
import io.dynamolock.core.test.FaultInjector;
import io.dynamolock.core.test.LockFixture;
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
 * The contract of {@link LockTemplate#acquireAsync}: the blocking acquire's guarantees through a future that
 * no thread waits on, and what cancelling it does. Against DynamoDB Local; steps are ordered with latches and
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
    void asyncWaitersOfSeveralTemplatesAreGrantedInFifoOrder() throws Exception {
        LockTemplate holderProcess = fixture.template();
        LockHandle holder = holderProcess.acquire("a-2", Duration.ofSeconds(5));
        List<String> granted = new CopyOnWriteArrayList<>();
        List<Long> tokens = new CopyOnWriteArrayList<>();
        List<CompletableFuture<Void>> waiters = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            String name = "waiter-" + i;
            // Alternate between the holder's process and others, so handoff and polling both serve.
            LockTemplate locks = i % 2 == 0 ? fixture.template() : holderProcess;
            waiters.add(locks.acquireAsync(request("a-2", WAIT)).thenAccept(lock -> {
                granted.add(name);
                tokens.add(lock.fencingToken());
                lock.release();
            }));
            fixture.awaitQueueLength("a-2", i + 2);
        }
        assertThat(waiters).as("nobody is granted while the holder holds").noneMatch(CompletableFuture::isDone);
        holder.release();
        CompletableFuture.allOf(waiters.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        assertThat(granted).containsExactly("waiter-0", "waiter-1", "waiter-2", "waiter-3", "waiter-4");
        assertThat(tokens).isSorted().doesNotHaveDuplicates();
        assertThat(tokens.get(0)).isGreaterThan(holder.fencingToken());
        assertThat(fixture.queue("a-2")).isEmpty();
    }

    @Test
    void timeOutFailsTheFutureAndLeavesNoEntry() {
        List<String> events = new CopyOnWriteArrayList<>();
        LockTemplate locks = fixture.template(b -> b.listener(recording(events)));
        LockHandle holder = fixture.template().acquire("a-3", Duration.ofSeconds(5));

        long start = System.nanoTime();
        CompletableFuture<LockHandle> waiter = locks.acquireAsync(request("a-3", Duration.ofMillis(300)));
        assertThatThrownBy(() -> waiter.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOfSatisfying(LockWaitTimeoutException.class, ex -> {
                    assertThat(ex.position()).isEqualTo(1);
                    assertThat(ex.ownersAhead()).containsExactly(holder.owner());
                    assertThat(ex.waited()).isGreaterThanOrEqualTo(Duration.ofMillis(300));
                    assertThat(ex.getMessage()).as("no thread waited: no hint about one")
                            .doesNotContain("this thread");
                });
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
        assertThat(fixture.queue("a-3")).as("the entry left before the future failed")
                .extracting(QueueSnapshot.Entry::owner).containsExactly(holder.owner());
        assertThat(events).containsExactly("acquiring a-3", "not acquired a-3");
    }

    @Test
    void cancellingAWaitRemovesTheEntryAndTheNextCallerIsGrantedAtOnce() throws Exception {
        List<String> events = new CopyOnWriteArrayList<>();
        // Polls so rare that only an entry that really left lets the next caller in within the test's time.
        LockTemplate locks = fixture.template(b -> b.pollInterval(Duration.ofSeconds(50), Duration.ofSeconds(50))
                .listener(recording(events)));
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
            public void onAcquired(LockHandle lock, Duration waited) {
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
    void crashedHolderIsReplacedOneLeaseAfterItsLastHeartbeat() throws Exception {
        LockTemplate crashing = fixture.template();
        LockHandle dead = crashing.acquire("a-9", Duration.ofSeconds(5));
        CompletableFuture<Long> waiter = fixture.template().acquireAsync(request("a-9", WAIT)).thenApply(lock -> {
            lock.release();
            return System.currentTimeMillis();
        });
        fixture.awaitQueueLength("a-9", 2);

        crashing.close(); // heartbeats stop, nothing is released: as if the process died
        long lastExpiry = fixture.queue("a-9").get(0).leaseExpiresAt().toEpochMilli();
        long grantedAt = waiter.get(60, TimeUnit.SECONDS);

        assertThat(grantedAt).as("never before the dead holder's lease ran out").isGreaterThanOrEqualTo(lastExpiry);
        assertThat(grantedAt - lastExpiry).as("within about one poll of it (loaded CI: generous slack)")
                .isLessThan(200 + 3_000);
        assertThat(dead.isValid()).isFalse();
        assertThat(fixture.queue("a-9")).isEmpty();
    }

    @Test
    void aWaiterWhoseLeaseRunsOutFailsWithLockLost() throws Exception {
        FaultInjector network = new FaultInjector();
        LockTemplate cutOff = fixture.template(b -> { }, network);
        LockHandle holder = fixture.template().acquire("a-10", Duration.ofSeconds(5));
        CompletableFuture<LockHandle> waiter = cutOff.acquireAsync(request("a-10", WAIT));
        fixture.awaitQueueLength("a-10", 2);
        network.failAlways(FaultInjector.Step.RENEW, FaultInjector.Fault.TIMEOUT_BEFORE);

        assertThatThrownBy(() -> waiter.get(LockFixture.LEASE.toMillis() + 5_000, TimeUnit.MILLISECONDS))
                .cause().isInstanceOf(LockLostException.class);
        assertThat(network.injected(FaultInjector.Step.RENEW)).as("renewals were cut off").isPositive();
        holder.release();
        try (LockHandle next = fixture.template().acquire("a-10", Duration.ofSeconds(10))) {
            assertThat(next.isValid()).isTrue();
        }
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

    @Test
    void aScopeWhoseLockWasLostFailsTheJoin() throws Exception {
        LockTemplate locks = fixture.template();
        LockHandle lock = locks.acquire("a-13", Duration.ofSeconds(5));
        CountDownLatch lost = new CountDownLatch(1);
        lock.onLost(handle -> lost.countDown());
        // Another process purges the entry, as it would after judging it expired.
        fixture.admin().updateItem(b -> b.tableName(fixture.table())
                .key(java.util.Map.of("pk", software.amazon.awssdk.services.dynamodb.model.AttributeValue.fromS("a-13"),
                        "sk", software.amazon.awssdk.services.dynamodb.model.AttributeValue.fromS("default")))
                .updateExpression("REMOVE #t, #e")
                .expressionAttributeNames(java.util.Map.of("#t", "t#" + lock.entryId(), "#e", "e#" + lock.entryId())));
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

    private static LockListener recording(List<String> events) {
        return new LockListener() {
            @Override
            public void onAcquiring(String entity, String namespace) {
                events.add("acquiring " + entity);
            }

            @Override
            public void onAcquired(LockHandle lock, Duration waited) {
                events.add("acquired " + lock.entity());
            }

            @Override
            public void onNotAcquired(String entity, String namespace, Duration waited) {
                events.add("not acquired " + entity);
            }

            @Override
            public void onFailed(String entity, String namespace, Duration waited, RuntimeException failure) {
                events.add("failed " + entity + " " + failure.getClass().getSimpleName());
            }
        };
    }
}
