package io.dynamolock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dynamolock.core.test.Await;
import io.dynamolock.core.test.FaultInjector;
import io.dynamolock.core.test.LockFixture;
import io.dynamolock.core.test.PausingInterceptor;
import io.dynamolock.core.test.RecordingListener;
import io.dynamolock.core.test.RequestCounter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import java.util.function.Predicate;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * The guarantees of the lock, each against DynamoDB Local. The cases about waiting run twice: with a thread
 * blocked in {@code acquire()}, and with {@code acquireAsync()}, which no thread waits on.
 */
@Timeout(120)
class LockTemplateContractTests {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final LockFixture fixture = new LockFixture();
    private final ExecutorService pool = Executors.newCachedThreadPool();

    /** The two ways to wait for a lock; either way the outcome comes as a future. */
    enum Waiting {
        BLOCKING, ASYNC;

        CompletableFuture<LockHandle> acquire(LockTemplate locks, String entity, Duration wait, ExecutorService threads) {
            LockRequest request = LockRequest.builder(entity).wait(wait).build();
            return this == ASYNC ? locks.acquireAsync(request) : CompletableFuture.supplyAsync(() -> locks.acquire(request), threads);
        }
    }

    @AfterEach
    void tearDown() throws Exception {
        pool.shutdownNow();
        fixture.close();
    }

    @Test
    void uncontendedAcquireAndReleaseTakeOneRequestEach() {
        RequestCounter counter = new RequestCounter();
        LockTemplate locks = fixture.template(b -> { }, counter);

        LockHandle lock = locks.acquire("order-1", Duration.ofSeconds(5));
        assertThat(counter.snapshot()).isEqualTo(Map.of("UpdateItem", 1L));
        lock.release();
        assertThat(counter.snapshot()).isEqualTo(Map.of("UpdateItem", 2L));
        lock.release();
        assertThat(counter.total()).as("a second release does nothing").isEqualTo(2);
    }

    /**
     * The README's exception to one request per enqueue and heartbeat: a fail-open write whose TTL would lower the
     * item's by more than 5 minutes (a much longer lease wrote it, even one that has left) is refused and sent again
     * without the TTL.
     */
    @Test
    void afterAMuchLongerLeaseLeftAnEnqueueAndEachHeartbeatTakeTwoRequestsAsTheReadmeSays() {
        fixture.template().acquire(LockRequest.builder("order-long").wait(Duration.ZERO).lease(Duration.ofHours(24))
                .build()).release();
        LockBreakTests.Steps steps = new LockBreakTests.Steps();
        LockTemplate locks = fixture.template(b -> { }, steps);

        try (LockHandle lock = locks.acquire("order-long", Duration.ZERO)) {
            assertThat(steps.sent).as("the enqueue, refused for the TTL, then without it")
                    .containsExactly(ProtocolStep.ENQUEUE, ProtocolStep.ENQUEUE);
            Await.until(Duration.ofSeconds(5), "a heartbeat", () -> steps.sent.size() >= 4);
            assertThat(steps.sent.subList(2, 4)).as("a heartbeat: the same two writes")
                    .containsExactly(ProtocolStep.RENEW, ProtocolStep.RENEW);
        }
    }

    /**
     * As above, with a fail-closed entry in the item (TTL "never"): a fail-open no-wait attempt costs its enqueue
     * twice and its removal, 3 requests where the README's usual count is 2.
     */
    @Test
    void aNoWaitAttemptBehindAFailClosedHolderTakesThreeRequestsAsTheReadmeSays() {
        LockHandle holder = fixture.template().acquire(LockRequest.builder("order-closed").wait(Duration.ZERO)
                .failClosed(true).build());
        LockBreakTests.Steps steps = new LockBreakTests.Steps();
        try {
            assertThat(fixture.template(b -> { }, steps).tryAcquire("order-closed")).isEmpty();
            assertThat(steps.sent).containsExactly(ProtocolStep.ENQUEUE, ProtocolStep.ENQUEUE, ProtocolStep.REMOVE);
        }
        finally {
            holder.release();
        }
    }

    @Test
    void excludesMutuallyUnderContention() throws Exception {
        List<LockTemplate> processes = List.of(fixture.template(), fixture.template());
        DynamoDbClient data = fixture.admin();
        int threads = 8;
        int incrementsPerThread = 40;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        List<Future<?>> workers = new ArrayList<>();
        CountDownLatch start = new CountDownLatch(1);
        for (int t = 0; t < threads; t++) {
            LockTemplate locks = processes.get(t % processes.size());
            workers.add(pool.submit(() -> {
                start.await();
                for (int i = 0; i < incrementsPerThread; i++) {
                    locks.execute("counter", Duration.ofSeconds(60), lock -> {
                        if (inside.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        // An unprotected read-modify-write: only the lock keeps updates from being lost.
                        int value = readCounter(data);
                        writeCounter(data, value + 1);
                        inside.decrementAndGet();
                        return null;
                    });
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> worker : workers) {
            worker.get(100, TimeUnit.SECONDS);
        }
        assertThat(overlaps.get()).isZero();
        assertThat(readCounter(data)).isEqualTo(threads * incrementsPerThread);
        assertThat(fixture.queue("counter")).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(Waiting.class)
    void grantsInFifoOrderWithIncreasingFencingTokens(Waiting waiting) throws Exception {
        LockTemplate holderProcess = fixture.template();
        LockHandle holder = holderProcess.acquire("order-2", Duration.ofSeconds(5));
        List<String> granted = new CopyOnWriteArrayList<>();
        List<Long> tokens = new CopyOnWriteArrayList<>();
        List<CompletableFuture<Void>> waiters = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            String name = "waiter-" + i;
            // Alternate between the holder's process and others, so handoff and polling both serve.
            LockTemplate locks = i % 2 == 0 ? fixture.template() : holderProcess;
            waiters.add(waiting.acquire(locks, "order-2", Duration.ofSeconds(60), pool).thenAccept(lock -> {
                granted.add(name);
                tokens.add(lock.fencingToken());
                lock.release();
            }));
            fixture.awaitQueueLength("order-2", i + 2);
        }
        assertThat(waiters).as("nobody is granted while the holder holds").noneMatch(CompletableFuture::isDone);
        holder.release();
        CompletableFuture.allOf(waiters.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        assertThat(granted).containsExactly("waiter-0", "waiter-1", "waiter-2", "waiter-3", "waiter-4");
        assertThat(tokens).isSorted().doesNotHaveDuplicates();
        assertThat(tokens.get(0)).isGreaterThan(holder.fencingToken());
        assertThat(fixture.queue("order-2")).isEmpty();
    }

    @Test
    void fencingTokensIncreaseAfterTheItemWasRemoved() {
        LockTemplate locks = fixture.template();
        long first;
        try (LockHandle lock = locks.acquire("order-3", Duration.ofSeconds(5))) {
            first = lock.fencingToken();
        }
        // As TTL would after the lock sat idle.
        fixture.admin().deleteItem(b -> b.tableName(fixture.table())
                .key(Map.of("pk", AttributeValue.fromS("order-3"), "sk", AttributeValue.fromS("default"))));
        assertThat(fixture.item("order-3", "default")).isEmpty();
        try (LockHandle lock = locks.acquire("order-3", Duration.ofSeconds(5))) {
            assertThat(lock.fencingToken()).isGreaterThan(first);
        }
    }

    @Test
    void itemCarriesATtlPastEveryEntry() {
        LockTemplate locks = fixture.template();
        try (LockHandle lock = locks.acquire("order-4", Duration.ofSeconds(5))) {
            Map<String, AttributeValue> item = fixture.item("order-4", "default");
            long ttlSeconds = Long.parseLong(item.get("expiresAt").n());
            long entryExpiryMillis = Long.parseLong(item.get("e#" + lock.entryId()).n());
            assertThat(ttlSeconds * 1000).isGreaterThan(entryExpiryMillis);
        }
        Map<String, AttributeValue> released = fixture.item("order-4", "default");
        // No entry stays: only the counter, the TTL, the permits and the release history for predictive polling.
        assertThat(released.keySet()).containsExactlyInAnyOrder("pk", "sk", "next", "expiresAt", "permits", "lr", "ri");
    }

    @ParameterizedTest
    @EnumSource(Waiting.class)
    void timesOutAfterWaitAndLeavesNoEntry(Waiting waiting) {
        LockTemplate locks = fixture.template();
        LockHandle holder = fixture.template().acquire("order-5", Duration.ofSeconds(5));

        long start = System.nanoTime();
        assertThatThrownBy(() -> waiting.acquire(locks, "order-5", Duration.ofMillis(300), pool).get(30, TimeUnit.SECONDS))
                .cause().isInstanceOfSatisfying(LockWaitTimeoutException.class, ex -> {
                    assertThat(ex.entity()).isEqualTo("order-5");
                    assertThat(ex.namespace()).isEqualTo("default");
                    assertThat(ex.position()).isEqualTo(1);
                    assertThat(ex.ownersAhead()).containsExactly(holder.owner());
                    assertThat(ex.waited()).isGreaterThanOrEqualTo(Duration.ofMillis(300));
                    assertThat(ex.getMessage()).contains("order-5", "default", holder.owner());
                });
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
        assertThat(fixture.queue("order-5")).extracting(QueueSnapshot.Entry::owner).containsExactly(holder.owner());
    }

    @Test
    void noWaitFailsAtOnceWhenHeldAndLeavesNoEntry() {
        RequestCounter counter = new RequestCounter();
        LockTemplate locks = fixture.template(b -> { }, counter);
        LockHandle holder = fixture.template().acquire("order-6", Duration.ofSeconds(5));

        assertThat(locks.tryAcquire("order-6")).isEmpty();
        assertThatThrownBy(() -> locks.acquire("order-6", LockRequest.NO_WAIT)).isInstanceOf(LockWaitTimeoutException.class);
        assertThat(counter.snapshot()).as("enqueue and leave, twice").isEqualTo(Map.of("UpdateItem", 4L));
        assertThat(fixture.queue("order-6")).hasSize(1);

        holder.release();
        Optional<LockHandle> free = locks.tryAcquire("order-6");
        assertThat(free).isPresent();
        free.get().release();
    }

    @Test
    void waitsForeverUntilReleased() throws Exception {
        LockTemplate locks = fixture.template();
        LockHandle holder = fixture.template().acquire("order-7", Duration.ofSeconds(5));
        Future<Long> waiter = pool.submit(() -> locks.execute("order-7", LockRequest.WAIT_FOREVER, LockHandle::fencingToken));
        fixture.awaitQueueLength("order-7", 2);
        // Longer than a lease: the waiter's own heartbeats keep its place.
        Thread.sleep(LockFixture.LEASE.toMillis() + 500);
        assertThat(waiter).isNotDone();
        assertThat(fixture.queue("order-7")).hasSize(2);
        holder.release();
        assertThat(waiter.get(30, TimeUnit.SECONDS)).isGreaterThan(holder.fencingToken());
    }

    @Test
    void interruptedWaiterLeavesTheQueue() throws Exception {
        LockTemplate locks = fixture.template();
        LockHandle holder = fixture.template().acquire("order-8", Duration.ofSeconds(5));
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicReference<Boolean> interruptFlag = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                locks.acquire("order-8", Duration.ofSeconds(60));
            }
            catch (RuntimeException ex) {
                failure.set(ex);
                interruptFlag.set(Thread.currentThread().isInterrupted());
            }
        });
        waiter.start();
        fixture.awaitQueueLength("order-8", 2);
        waiter.interrupt();
        waiter.join(30_000);

        assertThat(failure.get()).isInstanceOf(LockInterruptedException.class).hasMessageContaining("order-8");
        assertThat(interruptFlag.get()).isTrue();
        assertThat(fixture.queue("order-8")).extracting(QueueSnapshot.Entry::owner).containsExactly(holder.owner());
    }

    /** A lock whose queue is full is not free: tryAcquire answers empty, as for any lock it cannot take now. */
    @Test
    void tryAcquireOfALockWhoseQueueIsFullIsEmpty() {
        LockTemplate locks = fixture.template(b -> b.maxQueueLength(1));
        try (LockHandle holder = fixture.template().acquire("order-full", Duration.ofSeconds(5))) {
            assertThatThrownBy(() -> locks.acquire("order-full", Duration.ofSeconds(5)))
                    .as("the queue is full").isInstanceOf(LockQueueFullException.class);
            assertThat(locks.tryAcquire("order-full")).isEmpty();
            assertThat(fixture.queue("order-full")).extracting(QueueSnapshot.Entry::owner)
                    .containsExactly(holder.owner());
        }
    }

    @Test
    void releasesWhenTheWorkThrows() {
        LockTemplate locks = fixture.template();
        assertThatThrownBy(() -> locks.execute("order-9", Duration.ofSeconds(5), lock -> {
            throw new IllegalStateException("boom");
        })).hasMessage("boom");
        assertThat(fixture.queue("order-9")).isEmpty();
    }

    @Test
    void reentersInsideTheScopeOfExecuteOnly() throws Exception {
        LockTemplate locks = fixture.template();
        locks.execute(LockRequest.builder("order-10").wait(Duration.ofSeconds(5)).build(), outer -> {
            long nested = locks.execute("order-10", Duration.ofSeconds(5), LockHandle::fencingToken);
            assertThat(nested).as("a nested execute joins").isEqualTo(outer.fencingToken());
            try (LockHandle inner = locks.acquire("order-10", Duration.ofSeconds(5))) {
                assertThat(inner.fencingToken()).as("so does an acquire inside the scope").isEqualTo(outer.fencingToken());
            }
            assertThat(outer.isValid()).as("the inner releases leave the outer hold").isTrue();
            assertThat(fixture.queue("order-10")).hasSize(1);
            Future<Optional<LockHandle>> otherThread = pool.submit(() -> locks.tryAcquire("order-10"));
            assertThat(otherThread.get(30, TimeUnit.SECONDS)).as("another thread queues, no re-entry").isEmpty();
            return null;
        });
        assertThat(fixture.queue("order-10")).isEmpty();
    }

    @Test
    void sameJvmWaiterIsHandedTheLockWithoutARequest() throws Exception {
        RequestCounter counter = new RequestCounter();
        // Polls so rare that only the handoff can grant within the test's time.
        LockTemplate locks = fixture.template(b -> b.leaseDuration(Duration.ofSeconds(60)).heartbeatInterval(Duration.ofSeconds(30))
                .pollInterval(Duration.ofSeconds(50), Duration.ofSeconds(50)), counter);
        LockHandle holder = locks.acquire("order-11", Duration.ofSeconds(5));
        CountDownLatch granted = new CountDownLatch(1);
        Future<?> waiter = pool.submit(() -> locks.execute("order-11", Duration.ofSeconds(60), lock -> {
            granted.countDown();
            return null;
        }));
        fixture.awaitQueueLength("order-11", 2);
        long before = counter.total();
        holder.release();
        assertThat(granted.await(20, TimeUnit.SECONDS)).isTrue();
        waiter.get(20, TimeUnit.SECONDS);
        assertThat(counter.count("GetItem")).as("no poll").isZero();
        assertThat(counter.total() - before).as("the release, then the waiter's own release").isEqualTo(2);
    }

    @ParameterizedTest
    @EnumSource(Waiting.class)
    void crashedHolderIsReplacedOneLeaseAfterItsLastHeartbeat(Waiting waiting) throws Exception {
        LockTemplate crashing = fixture.template();
        LockTemplate survivor = fixture.template();
        LockHandle dead = crashing.acquire("order-12", Duration.ofSeconds(5));
        CompletableFuture<Long> waiter = waiting.acquire(survivor, "order-12", Duration.ofSeconds(60), pool)
                .thenApply(lock -> {
                    long at = System.currentTimeMillis(); // before the release's round trip, which a late one hides
                    lock.release();
                    return at;
                });
        fixture.awaitQueueLength("order-12", 2);

        crashing.close(); // heartbeats stop, nothing is released: as if the process died
        long lastExpiry = fixture.queue("order-12").get(0).leaseExpiresAt().toEpochMilli();
        long grantedAt = waiter.get(60, TimeUnit.SECONDS);

        assertThat(grantedAt).as("never before the dead holder's lease ran out").isGreaterThanOrEqualTo(lastExpiry);
        assertThat(grantedAt - lastExpiry).as("within about one poll of it (loaded CI: generous slack)")
                .isLessThan(200 + 3_000);
        assertThat(dead.isValid()).isFalse();
        assertThat(fixture.queue("order-12")).isEmpty();
    }

    @Test
    void holderLearnsOfAPurgedEntryWithinOneHeartbeat() throws Exception {
        LockTemplate locks = fixture.template();
        LockHandle lock = locks.acquire("order-13", Duration.ofSeconds(5));
        CountDownLatch lost = new CountDownLatch(1);
        lock.onLost(handle -> lost.countDown());
        assertThat(lock.isValid()).isTrue();

        fixture.purge(lock);

        assertThat(lost.await(LockFixture.HEARTBEAT.toMillis() * 2 + 2_000, TimeUnit.MILLISECONDS)).isTrue();
        assertThat(lock.isValid()).isFalse();
        CountDownLatch late = new CountDownLatch(1);
        lock.onLost(handle -> late.countDown());
        assertThat(late.getCount()).as("a callback registered after the loss runs at once").isZero();
        lock.release();
        CountDownLatch afterRelease = new CountDownLatch(1);
        lock.onLost(handle -> afterRelease.countDown());
        assertThat(afterRelease.getCount()).as("and still once the lost lock was released").isZero();
    }

    @Test
    void aLockReleasedBeforeAnyLossNeverRunsALostCallback() {
        LockTemplate locks = fixture.template();
        LockHandle lock = locks.acquire("order-13b", Duration.ofSeconds(5));
        lock.release();
        AtomicBoolean ran = new AtomicBoolean();
        lock.onLost(handle -> ran.set(true));
        assertThat(ran).isFalse();
    }

    @Test
    void holderLearnsOfAnExpiredLeaseWhenRenewalsKeepFailing() throws Exception {
        AtomicBoolean unreachable = new AtomicBoolean();
        ExecutionInterceptor network = failing(request -> unreachable.get());
        LockTemplate locks = fixture.template(b -> { }, network);
        LockHandle lock = locks.acquire("order-16", Duration.ofSeconds(5));
        CountDownLatch lost = new CountDownLatch(1);
        lock.onLost(handle -> lost.countDown());
        long cutAt = System.nanoTime();
        unreachable.set(true);

        assertThat(lost.await(LockFixture.LEASE.toMillis() + LockFixture.HEARTBEAT.toMillis() + 2_000, TimeUnit.MILLISECONDS)).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - cutAt))
                .as("renewals failing for less than the lease are tolerated")
                .isGreaterThanOrEqualTo(LockFixture.LEASE.minus(LockFixture.HEARTBEAT));
        assertThat(lock.isValid()).isFalse();
        unreachable.set(false);
        lock.release();
        assertThat(fixture.queue("order-16")).as("the release still removes the entry").isEmpty();
    }

    @Test
    void purgesALongTailOfDeadEntries() {
        // A crashed JVM left 300 waiters: more than one request's expression can name.
        Map<String, AttributeValue> item = new java.util.HashMap<>(Map.of("pk", AttributeValue.fromS("order-17"),
                "sk", AttributeValue.fromS("default"), "next", AttributeValue.fromN("1300")));
        long expired = System.currentTimeMillis() - 1;
        for (int i = 0; i < 300; i++) {
            String owner = "ip-10-0-0-1.ec2.internal:12345:abcdef12/" + Long.toString(i, 36);
            item.put("t#" + owner, AttributeValue.fromN(Long.toString(1000 + i)));
            item.put("e#" + owner, AttributeValue.fromN(Long.toString(expired)));
        }
        fixture.admin().putItem(b -> b.tableName(fixture.table()).item(item));

        LockTemplate locks = fixture.template();
        try (LockHandle lock = locks.acquire("order-17", Duration.ofSeconds(30))) {
            assertThat(lock.fencingToken()).isEqualTo(1300);
        }
        assertThat(fixture.queue("order-17")).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(Waiting.class)
    void aWaiterWhoseLeaseRanOutIsNeverGranted(Waiting waiting) throws Exception {
        FaultInjector network = new FaultInjector();
        LockTemplate cutOff = fixture.template(b -> { }, network);
        LockHandle holder = fixture.template().acquire("order-18", Duration.ofSeconds(5));
        CompletableFuture<LockHandle> waiter = waiting.acquire(cutOff, "order-18", Duration.ofSeconds(60), pool);
        fixture.awaitQueueLength("order-18", 2);
        network.failAlways(FaultInjector.Step.RENEW, FaultInjector.Fault.TIMEOUT_BEFORE);

        assertThatThrownBy(() -> waiter.get(LockFixture.LEASE.toMillis() + 5_000, TimeUnit.MILLISECONDS))
                .as("the wait ends when the lease runs out, before any grant")
                .hasCauseInstanceOf(LockLostException.class)
                .cause().satisfies(lost -> assertThat(((LockLostException) lost).wasGranted()).isFalse());
        assertThat(network.injected(FaultInjector.Step.RENEW)).as("renewals were cut off").isPositive();
        holder.release();
        try (LockHandle next = fixture.template().acquire("order-18", Duration.ofSeconds(10))) {
            assertThat(next.isValid()).isTrue();
        }
    }

    @Test
    void hungRenewalsOfOtherLocksDoNotCostALeaseItsLife() throws Exception {
        CountDownLatch hung = new CountDownLatch(1);
        AtomicInteger hungRenewals = new AtomicInteger();
        FaultInjector network = new FaultInjector();
        network.onAttempt(FaultInjector.Step.RENEW, request -> {
            if (!((UpdateItemRequest) request).key().get("pk").s().equals("k3")) {
                hungRenewals.incrementAndGet();
                try {
                    hung.await(); // renewals of k1 and k2 never get an answer...
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt(); // ...until their time limit aborts them
                }
            }
        });
        LockTemplate locks = fixture.template(b -> { }, network);
        List<LockHandle> held = new ArrayList<>();
        for (String entity : List.of("k1", "k2", "k3")) {
            held.add(locks.acquire(entity, Duration.ofSeconds(5)));
        }
        LockHandle k3 = held.get(2);
        CountDownLatch k3Lost = new CountDownLatch(1);
        k3.onLost(lock -> k3Lost.countDown());

        // Three leases' worth of time: k3's renewals must get through between the stuck ones.
        assertThat(k3Lost.await(LockFixture.LEASE.toMillis() * 3, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(hungRenewals.get()).as("renewals of k1 and k2 were hung").isGreaterThanOrEqualTo(4);
        assertThat(k3.isValid()).isTrue();
        assertThat(fixture.template().tryAcquire("k3")).isEmpty();
        hung.countDown();
        held.forEach(LockHandle::release);
    }

    @Test
    void aThreadStopsJoiningWhenTheScopeEnds() throws Exception {
        LockTemplate locks = fixture.template();
        // Joined inside the scope and kept beyond it: e.g. handed to an async task.
        LockHandle inner = locks.execute(LockRequest.builder("order-19").wait(Duration.ofSeconds(5)).build(),
                outer -> locks.acquire("order-19", Duration.ofSeconds(5)));
        assertThat(inner.isValid()).as("the joined hold keeps the lock").isTrue();
        assertThat(locks.tryAcquire("order-19")).as("the scope ended: no re-entry").isEmpty();
        inner.release();
        assertThat(fixture.queue("order-19")).isEmpty();
    }

    @Test
    void inScopeLetsNestedCallsJoinAHandleFromAcquire() throws Exception {
        LockTemplate locks = fixture.template();
        LockHandle lock = locks.acquire("order-25", Duration.ofSeconds(5));
        long nested = locks.inScope(lock, held -> locks.execute("order-25", Duration.ofSeconds(5), LockHandle::fencingToken));
        assertThat(nested).isEqualTo(lock.fencingToken());
        assertThat(lock.isValid()).as("inScope does not release").isTrue();
        assertThatThrownBy(() -> fixture.template().inScope(lock, held -> null))
                .isInstanceOf(IllegalArgumentException.class);
        lock.release();
        assertThat(fixture.queue("order-25")).isEmpty();
    }

    @Test
    void rejectsAQueueLongerThanTheMaximum() throws Exception {
        LockTemplate locks = fixture.template(b -> b.maxQueueLength(2));
        LockHandle holder = locks.acquire("order-14", Duration.ofSeconds(5));
        Future<?> waiter = pool.submit(() -> fixture.template().execute("order-14", Duration.ofSeconds(60), lock -> null));
        fixture.awaitQueueLength("order-14", 2);

        assertThatThrownBy(() -> locks.acquire(LockRequest.builder("order-14").reentrant(false).wait(Duration.ofSeconds(5)).build()))
                .isInstanceOf(LockQueueFullException.class)
                .hasMessageContaining("maxQueueLength 2");
        assertThat(fixture.queue("order-14")).hasSize(2);
        holder.release();
        waiter.get(30, TimeUnit.SECONDS);
    }

    @Test
    void listsActiveLocksAndNotifiesListeners() throws Exception {
        RecordingListener recorder = new RecordingListener();
        List<String> events = recorder.events();
        LockTemplate locks = fixture.template(b -> b.listener(recorder));
        try (LockHandle lock = locks.acquire("order-15", Duration.ofSeconds(5))) {
            assertThat(locks.activeLocks()).singleElement().satisfies(info -> {
                assertThat(info.entity()).isEqualTo("order-15");
                assertThat(info.holding()).isTrue();
                assertThat(info.ticket()).isEqualTo(lock.fencingToken());
            });
            assertThat(CompletableFuture.supplyAsync(() -> locks.tryAcquire("order-15")).get(30, TimeUnit.SECONDS)).isEmpty();
        }
        assertThat(locks.activeLocks()).isEmpty();
        assertThat(events).containsExactly("acquiring order-15", "acquired order-15", "acquiring order-15",
                "not acquired order-15", "released order-15");
    }

    @Test
    void listenersHearEveryAcquisitionAndItsOutcome() {
        RecordingListener recorder = new RecordingListener();
        List<String> events = recorder.events();
        LockTemplate locks = fixture.template(b -> b.maxQueueLength(1).listener(recorder));
        locks.execute("order-27", Duration.ofSeconds(5), lock -> null);
        LockHandle holder = fixture.template().acquire("order-26", Duration.ofSeconds(5));
        assertThatThrownBy(() -> locks.acquire("order-26", Duration.ofSeconds(5))).isInstanceOf(LockQueueFullException.class);
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> locks.acquire("order-26", Duration.ofSeconds(5)))
                    .isInstanceOf(LockInterruptedException.class);
        }
        finally {
            Thread.interrupted();
        }
        holder.release();

        assertThat(events).containsExactly("acquiring order-27", "acquired order-27", "released order-27",
                "acquiring order-26", "failed order-26 LockQueueFullException",
                "acquiring order-26", "failed order-26 LockInterruptedException");
    }

    // ---- R4 no hot key ----

    @Test
    void distinctLocksNeverWriteTheSameItem() {
        Set<String> written = ConcurrentHashMap.newKeySet();
        ExecutionInterceptor keys = new ExecutionInterceptor() {
            @Override
            public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
                if (context.request() instanceof UpdateItemRequest update) {
                    written.add(update.key().get("pk").s() + "/" + update.key().get("sk").s());
                }
            }
        };
        LockTemplate locks = fixture.template(b -> { }, keys);
        locks.execute("order-a", Duration.ofSeconds(5), a -> locks.execute(LockRequest.builder("order-b")
                .namespace("billing").wait(Duration.ofSeconds(5)).build(), b -> null));
        assertThat(written).as("each lock writes its own item only: no shared counter")
                .containsExactlyInAnyOrder("order-a/default", "order-b/billing");
    }

    // ---- R8 identity: one acquisition = one entry, whatever the owner name ----

    @Test
    void templatesWithTheSameOwnerNameNeverShareAnEntry() {
        LockTemplate podA = fixture.template(b -> b.ownerName("order-service"));
        LockTemplate podB = fixture.template(b -> b.ownerName("order-service"));
        LockHandle a = podA.acquire("order-20", Duration.ofSeconds(5));

        assertThatThrownBy(() -> podB.acquire("order-20", Duration.ofMillis(300)))
                .isInstanceOf(LockWaitTimeoutException.class);
        assertThat(podB.tryAcquire("order-20")).isEmpty();
        assertThat(a.isValid()).isTrue();
        assertThat(fixture.queue("order-20")).singleElement()
                .satisfies(entry -> assertThat(entry.ticket()).isEqualTo(a.fencingToken()));
        a.release();
        assertThat(fixture.queue("order-20")).isEmpty();
    }

    @Test
    void aTemplateRebuiltWithTheSameOwnerNameQueuesBehindTheOldHolder() {
        LockTemplate before = fixture.template(b -> b.ownerName("order-service"));
        LockHandle held = before.acquire("order-21", Duration.ofSeconds(5));
        before.close(); // a context refresh or a Lambda re-init: closed without release, the lease runs on

        LockTemplate after = fixture.template(b -> b.ownerName("order-service"));
        assertThat(after.tryAcquire("order-21")).isEmpty();
        assertThat(fixture.queue("order-21")).singleElement()
                .satisfies(entry -> assertThat(entry.ticket()).isEqualTo(held.fencingToken()));
    }

    // ---- R10 re-entry is lexical ----

    @Test
    void aHandleFromAcquireIsNotJoinedByLaterWorkOnTheSameThread() throws Exception {
        LockTemplate locks = fixture.template();
        ExecutorService pooled = Executors.newSingleThreadExecutor();
        try {
            LockHandle escaped = pooled.submit(() -> locks.acquire("acct-1", Duration.ofSeconds(5))).get();
            Future<LockHandle> unrelated = pooled.submit(() -> locks.acquire("acct-1", Duration.ofMillis(300)));

            assertThatThrownBy(unrelated::get).cause()
                    .isInstanceOf(LockWaitTimeoutException.class)
                    .as("a thread waiting on a lock it took itself is told so")
                    .hasMessageContaining("a handle this thread took with acquire()");
            assertThat(escaped.isValid()).isTrue();
            escaped.release();
        }
        finally {
            pooled.shutdownNow();
        }
    }

    /**
     * A blocking acquire inside a scope, on a worker of the common pool: {@code CompletableFuture.get()} there runs
     * the pool's pending async tasks on the waiting thread (when the pool has more than one worker: the core
     * module's tests run it with three, as on a host with four cores), and such a task, unrelated to the scope,
     * would find the scope's lock on its thread and join it, in the middle of another task's work.
     */
    @Test
    void aBlockingAcquireInsideAScopeOnAPoolWorkerLetsNoOtherTaskOfThePoolJoin() throws Exception {
        int workers = ForkJoinPool.getCommonPoolParallelism();
        Assumptions.assumeTrue(workers > 1, "the common pool has workers that help only with parallelism > 1");
        LockTemplate locks = fixture.template();
        LockHandle y = fixture.template().acquire("fj-y", Duration.ofSeconds(5));
        CountDownLatch busy = new CountDownLatch(workers - 1);
        CountDownLatch free = new CountDownLatch(1);
        for (int i = 0; i < workers - 1; i++) { // all other workers: the unrelated task stays in our worker's queue
            ForkJoinPool.commonPool().execute(() -> {
                busy.countDown();
                FaultInjector.await(free, 60);
            });
        }
        try {
            assertThat(busy.await(10, TimeUnit.SECONDS)).isTrue();
            CompletableFuture<Boolean> joinedInside = CompletableFuture.supplyAsync(() -> {
                CompletableFuture<Boolean> unrelated = CompletableFuture.supplyAsync(() -> locks.tryAcquire("fj-x")
                        .map(handle -> {
                            handle.release();
                            return true;
                        }).orElse(false));
                return locks.execute(LockRequest.builder("fj-x").wait(Duration.ofSeconds(5)).build(), x -> {
                    try (LockHandle never = locks.acquire("fj-y", Duration.ofSeconds(1))) {
                        throw new AssertionError("fj-y is held by another template");
                    }
                    catch (LockWaitTimeoutException expected) {
                        // waited (blocked) for a second inside fj-x's scope
                    }
                    return unrelated.isDone() && unrelated.join();
                });
            });
            assertThat(joinedInside.get(30, TimeUnit.SECONDS)).as("an unrelated task joined fj-x inside its scope")
                    .isFalse();
        }
        finally {
            free.countDown();
            y.release();
        }
    }

    /**
     * Blocking acquires waiting on every worker of the common pool leave it running: the holder may need a task of
     * the pool to finish ({@code CompletableFuture.supplyAsync(..).get()} in its body), so a waiting worker must
     * be stood in for, as {@code CompletableFuture.get()} has the pool do.
     */
    @Test
    void blockingAcquiresWaitingOnEveryWorkerOfTheCommonPoolLeaveItRunningForTheHolder() throws Exception {
        int workers = ForkJoinPool.getCommonPoolParallelism();
        LockTemplate locks = fixture.template();
        LockHandle held = locks.acquire("fj-starve", Duration.ofSeconds(5));
        CountDownLatch running = new CountDownLatch(workers);
        List<CompletableFuture<Void>> waiters = new ArrayList<>();
        for (int i = 0; i < workers; i++) {
            waiters.add(CompletableFuture.runAsync(() -> {
                running.countDown();
                locks.acquire("fj-starve", Duration.ofSeconds(60)).release();
            }));
        }
        try {
            assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
            Await.until(Duration.ofSeconds(10), "every worker queued",
                    () -> locks.queue("fj-starve", null).entries().size() == workers + 1);
            // The holder, in its body, needs one small task of the common pool.
            assertThat(CompletableFuture.supplyAsync(() -> 42).get(5, TimeUnit.SECONDS)).isEqualTo(42);
        }
        finally {
            held.release();
            for (CompletableFuture<Void> waiter : waiters) {
                waiter.get(60, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * A pool that may not add a spare worker for a blocked one (its maximum size reached; the common pool after
     * 256 spares) refuses the managed block: the acquire must still wait, or leave the queue, never throw with its
     * entry left behind to be granted to nobody.
     */
    @Test
    void aBlockingAcquireOnAForkJoinPoolThatCannotStandInASpareWorkerStillWaitsAndLeavesNoEntryBehind()
            throws Exception {
        LockTemplate locks = fixture.template();
        LockHandle held = locks.acquire("fj-bounded", Duration.ofSeconds(5));
        ForkJoinPool pool = new ForkJoinPool(1, ForkJoinPool.defaultForkJoinWorkerThreadFactory, null, false,
                0, 2, 1, null, 60, TimeUnit.SECONDS);
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        CountDownLatch done = new CountDownLatch(2);
        for (int i = 0; i < 2; i++) {
            pool.execute(() -> {
                try {
                    locks.acquire("fj-bounded", Duration.ofSeconds(60)).release();
                }
                catch (Throwable ex) {
                    failures.add(ex);
                }
                finally {
                    done.countDown();
                }
            });
        }
        try {
            fixture.awaitQueueLength("fj-bounded", 3);
            held.release();
            assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
            assertThat(failures).isEmpty();
            assertThat(fixture.queue("fj-bounded")).as("no entry left behind").isEmpty();
        }
        finally {
            pool.shutdownNow();
        }
    }

    /**
     * A pool that cannot start the spare worker a managed block asks for fails the wait with an Error (out of
     * memory for a native thread): the acquire leaves the queue, and its listeners hear how it ended.
     */
    @Test
    void aBlockingAcquireWhoseWaitFailsWithAnErrorLeavesTheQueueAndTellsItsListeners() throws Exception {
        RecordingListener recorder = new RecordingListener();
        LockTemplate locks = fixture.template(b -> b.listener(recorder));
        LockHandle held = fixture.template().acquire("fj-error", Duration.ofSeconds(30));
        ForkJoinPool pool = new ForkJoinPool(1, threadsUpTo(1, new CountDownLatch(1)), null, false);
        CompletableFuture<Throwable> thrown = new CompletableFuture<>();
        pool.execute(() -> {
            try {
                locks.acquire("fj-error", Duration.ofSeconds(60)).release();
                thrown.complete(null);
            }
            catch (Throwable ex) {
                thrown.complete(ex);
            }
        });
        try {
            assertThat(thrown.get(60, TimeUnit.SECONDS)).isInstanceOf(OutOfMemoryError.class);
            assertThat(fixture.queue("fj-error")).as("only the holder left").hasSize(1);
            assertThat(recorder.events()).as("what the listener heard").hasSize(2);
        }
        finally {
            held.release();
            pool.shutdownNow();
        }
    }

    /**
     * The same after an interrupt: the wait for the withdrawal must not ask the pool for a spare worker it cannot
     * start either; the listeners still hear how the acquisition ended.
     */
    @Test
    void anInterruptedBlockingAcquireWhoseReWaitFailsWithAnErrorTellsItsListeners() throws Exception {
        RecordingListener recorder = new RecordingListener();
        LockTemplate locks = fixture.template(b -> b.listener(recorder));
        LockHandle held = fixture.template().acquire("fj-error-int", Duration.ofSeconds(30));
        CountDownLatch spareStarted = new CountDownLatch(2); // the worker, and the first managed wait's spare
        // minimumRunnable 2: a busy spare is not enough, the next managed wait asks for another
        ForkJoinPool pool = new ForkJoinPool(1, threadsUpTo(2, spareStarted), null, false, 0, 300, 2, null, 60,
                TimeUnit.SECONDS);
        CompletableFuture<Throwable> thrown = new CompletableFuture<>();
        AtomicReference<Thread> acquirer = new AtomicReference<>();
        CountDownLatch busy = new CountDownLatch(1);
        CountDownLatch freeSpare = new CountDownLatch(1);
        pool.execute(() -> {
            acquirer.set(Thread.currentThread());
            try {
                locks.acquire("fj-error-int", Duration.ofSeconds(60)).release();
                thrown.complete(null);
            }
            catch (Throwable ex) {
                thrown.complete(ex);
            }
        });
        try {
            assertThat(spareStarted.await(30, TimeUnit.SECONDS)).isTrue();
            pool.execute(() -> { // the spare is busy: the next managed wait must start another
                busy.countDown();
                try {
                    freeSpare.await();
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            });
            assertThat(busy.await(30, TimeUnit.SECONDS)).isTrue();
            acquirer.get().interrupt();
            Throwable ex = thrown.get(60, TimeUnit.SECONDS);
            Await.until(Duration.ofSeconds(30), "only the holder left", () -> fixture.queue("fj-error-int").size() == 1);
            assertThat(recorder.events()).as("what the listener heard (thrown: " + ex + ")").hasSize(2);
        }
        finally {
            freeSpare.countDown();
            held.release();
            pool.shutdownNow();
        }
    }

    /**
     * Makes {@code threads} pool workers, counting {@code made} down for each, then fails as the JVM does when it
     * cannot start a native thread.
     */
    private static ForkJoinPool.ForkJoinWorkerThreadFactory threadsUpTo(int threads, CountDownLatch made) {
        AtomicInteger asked = new AtomicInteger();
        return pool -> {
            if (asked.incrementAndGet() > threads) {
                throw new OutOfMemoryError("unable to create native thread: possibly out of memory or process/resource"
                        + " limits reached");
            }
            made.countDown();
            return ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(pool);
        };
    }

    /** A scheduled job's next tick behind its own minimum hold: the timer releases that hold, not the thread. */
    @Test
    void aHandleKeptForAMinimumHoldIsNoSelfWaitOfItsThread() throws Exception {
        LockTemplate locks = fixture.template();
        ExecutorService scheduler = Executors.newSingleThreadExecutor();
        try {
            scheduler.submit(() -> locks.acquire("acct-2", Duration.ofSeconds(5)).releaseAfter(Duration.ofSeconds(30)))
                    .get();
            Future<LockHandle> nextTick = scheduler.submit(() -> locks.acquire("acct-2", Duration.ofMillis(300)));

            assertThatThrownBy(nextTick::get).cause().isInstanceOf(LockWaitTimeoutException.class)
                    .message().as("no self-wait advice").doesNotContain("took with acquire()");
        }
        finally {
            scheduler.shutdownNow();
        }
    }

    /** As above, for a job that locks several entities: the minimum hold is the whole lock's, kept by the timer. */
    @Test
    void aLockOfSeveralEntitiesKeptForAMinimumHoldIsNoSelfWaitOfItsThread() throws Exception {
        LockTemplate locks = fixture.template();
        ExecutorService scheduler = Executors.newSingleThreadExecutor();
        LockRequest both = LockRequest.builder(List.of("acct-3", "acct-4")).wait(Duration.ofMillis(300)).build();
        try {
            scheduler.submit(() -> locks.acquire(both).releaseAfter(Duration.ofSeconds(30))).get();
            Future<LockHandle> nextTick = scheduler.submit(() -> locks.acquire(both));

            assertThatThrownBy(nextTick::get).cause().isInstanceOf(LockWaitTimeoutException.class)
                    .message().as("no self-wait advice").doesNotContain("took with acquire()");
        }
        finally {
            scheduler.shutdownNow();
        }
    }

    /** A hold that joined a lock of its thread (R10) and is kept for a minimum hold outlives the lock it joined. */
    @Test
    void aJoinedHoldKeptForAMinimumHoldIsNoSelfWaitOfItsThread() throws Exception {
        LockTemplate locks = fixture.template();
        ExecutorService scheduler = Executors.newSingleThreadExecutor();
        try {
            scheduler.submit(() -> locks.execute(LockRequest.of("acct-5"), outer -> {
                locks.acquire("acct-5", Duration.ofSeconds(5)).releaseAfter(Duration.ofSeconds(30));
                return null;
            })).get();
            assertThat(fixture.queue("acct-5")).as("kept after the outer lock's release").hasSize(1);
            Future<LockHandle> nextTick = scheduler.submit(() -> locks.acquire("acct-5", Duration.ofMillis(300)));

            assertThatThrownBy(nextTick::get).cause().isInstanceOf(LockWaitTimeoutException.class)
                    .message().as("no self-wait advice").doesNotContain("took with acquire()");
        }
        finally {
            scheduler.shutdownNow();
        }
    }

    /**
     * A join kept for a minimum hold does not free the lock while the handle it joined, taken with acquire(), is
     * still held: the timer drops only the join, the thread still waits behind its own handle and must be told so.
     */
    @Test
    void aJoinKeptForAMinimumHoldDoesNotHideTheHandleItJoined() throws Exception {
        LockTemplate locks = fixture.template();
        ExecutorService pooled = Executors.newSingleThreadExecutor();
        try {
            LockHandle escaped = pooled.submit(() -> {
                LockHandle held = locks.acquire("acct-9", Duration.ofSeconds(5));
                locks.inScope(held, lock -> {
                    locks.acquire("acct-9", Duration.ofSeconds(5)).releaseAfter(Duration.ofSeconds(30));
                    return null;
                });
                return held;
            }).get();
            Future<LockHandle> unrelated = pooled.submit(() -> locks.acquire("acct-9", Duration.ofMillis(300)));

            assertThatThrownBy(unrelated::get).cause().isInstanceOf(LockWaitTimeoutException.class)
                    .as("the thread waits behind its own acquire() handle, which no timer releases")
                    .hasMessageContaining("a handle this thread took with acquire()");
            assertThat(escaped.isValid()).isTrue();
            escaped.release();
        }
        finally {
            pooled.shutdownNow();
        }
    }

    // ---- R11 lease loss is reported on time ----

    @Test
    void aHungRenewalDoesNotDelayTheLossOfTheLease() throws Exception {
        FaultInjector network = new FaultInjector();
        Map<SdkRequest, Long> sentAt = java.util.Collections.synchronizedMap(new java.util.IdentityHashMap<>());
        AtomicLong lastConfirmedSend = new AtomicLong();
        CountDownLatch renewed = new CountDownLatch(1);
        AtomicBoolean hang = new AtomicBoolean();
        CountDownLatch hangUntil = new CountDownLatch(1);
        network.onAttempt(FaultInjector.Step.RENEW, request -> sentAt.put(request, System.nanoTime()));
        network.onAnswer(FaultInjector.Step.RENEW, request -> {
            lastConfirmedSend.set(sentAt.get(request));
            renewed.countDown();
        });
        // Once cut, every renewal hangs, even past the client's own time limit (an interrupt does not end it), until
        // the test lets it go: a loss reported only when a renewal ends would never come.
        AtomicInteger hungNow = new AtomicInteger();
        network.onAttempt(FaultInjector.Step.RENEW, request -> {
            if (hang.get()) {
                hungNow.incrementAndGet();
                boolean interrupted = false;
                try {
                    while (true) {
                        try {
                            hangUntil.await();
                            break;
                        }
                        catch (InterruptedException ex) {
                            interrupted = true;
                        }
                    }
                }
                finally {
                    hungNow.decrementAndGet();
                    if (interrupted) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
        });
        LockTemplate locks = fixture.template(b -> { }, network);
        LockHandle lock = locks.acquire("order-22", Duration.ofSeconds(5));
        AtomicLong lostAt = new AtomicLong();
        AtomicInteger hungAtLoss = new AtomicInteger();
        CountDownLatch lost = new CountDownLatch(1);
        lock.onLost(handle -> {
            lostAt.set(System.nanoTime());
            hungAtLoss.set(hungNow.get());
            lost.countDown();
        });
        assertThat(renewed.await(10, TimeUnit.SECONDS)).isTrue();
        int renewalsBeforeCut = network.attempts(FaultInjector.Step.RENEW);
        hang.set(true);
        long cutAt = System.nanoTime();

        boolean reported = lost.await(LockFixture.LEASE.toMillis() * 3, TimeUnit.MILLISECONDS);
        hangUntil.countDown();
        assertThat(reported).as("the loss was reported while renewals hung").isTrue();
        assertThat(hungAtLoss.get()).as("a renewal still hung when the loss was reported").isPositive();
        long leaseEnd = lastConfirmedSend.get() + LockFixture.LEASE.toNanos();
        assertThat(network.attempts(FaultInjector.Step.RENEW)).as("renewals were hung").isGreaterThan(renewalsBeforeCut);
        assertThat(lastConfirmedSend.get()).isLessThan(cutAt);
        assertThat(lostAt.get()).as("not before the lease as last confirmed ended (its start read just before)")
                .isGreaterThan(leaseEnd - Duration.ofMillis(50).toNanos());
        // R11: when it ends, not at the next renewal's end or a lease later; half a lease spares a loaded machine.
        assertThat(Duration.ofNanos(lostAt.get() - leaseEnd)).as("reported after the lease as last confirmed ended")
                .isLessThan(LockFixture.LEASE.dividedBy(2));
        assertThat(lock.isValid()).isFalse();
    }

    @Test
    void aHandleHeldWhenItsTemplateClosesIsReportedLostWhenItsLeaseEnds() throws Exception {
        LockTemplate locks = fixture.template();
        LockHandle lock = locks.acquire("order-23", Duration.ofSeconds(5));
        CountDownLatch lost = new CountDownLatch(1);
        lock.onLost(handle -> lost.countDown());
        locks.close();

        assertThat(lost.await(LockFixture.LEASE.toMillis() * 3, TimeUnit.MILLISECONDS)).isTrue();
        assertThat(lock.isValid()).isFalse();
    }

    // ---- R9 the item's TTL never undercuts a live entry ----

    @Test
    void aShortLeaseNeverPullsTheItemTtlBelowALongLeaseHolder() {
        LockTemplate locks = fixture.template();
        LockHandle longHolder = locks.acquire(LockRequest.builder("order-24").lease(Duration.ofHours(3))
                .wait(Duration.ofSeconds(5)).build());
        assertThat(fixture.template().tryAcquire("order-24")).isEmpty(); // a caller with the default lease

        Map<String, AttributeValue> item = fixture.item("order-24", "default");
        long holderExpiryMillis = fixture.queue("order-24").get(0).leaseExpiresAt().toEpochMilli();
        assertThat(Long.parseLong(item.get("expiresAt").n()) * 1000)
                .as("TTL at least the long holder's lease end plus the margin")
                .isGreaterThanOrEqualTo(holderExpiryMillis + Duration.ofHours(1).toMillis());
        longHolder.release();
    }

    // ---- R12 renewal capacity grows with what the JVM holds ----

    @Test
    void slowRenewalsDoNotCostHealthyLocksTheirLease() throws Exception {
        FaultInjector network = new FaultInjector();
        // Applied at once, answered after 200 ms: a hot partition or a far region.
        network.onAnswer(FaultInjector.Step.RENEW, request -> FaultInjector.delay(Duration.ofMillis(200)));
        LockTemplate locks = fixture.template(b -> { }, network);
        int held = 40;
        List<LockHandle> handles = new ArrayList<>();
        AtomicInteger lostCount = new AtomicInteger();
        for (int i = 0; i < held; i++) {
            LockHandle lock = locks.acquire("slow-" + i, Duration.ofSeconds(5));
            lock.onLost(handle -> lostCount.incrementAndGet());
            handles.add(lock);
        }
        CountDownLatch anyLost = new CountDownLatch(1);
        handles.forEach(lock -> lock.onLost(handle -> anyLost.countDown()));

        // Three leases: every entry must have been renewed several times through the slow answers.
        assertThat(anyLost.await(LockFixture.LEASE.toMillis() * 3, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(network.attempts(FaultInjector.Step.RENEW)).as("renewals were slowed")
                .isGreaterThanOrEqualTo(held * 4);
        assertThat(lostCount.get()).isZero();
        assertThat(handles).allMatch(LockHandle::isValid);
        handles.forEach(LockHandle::release);
    }

    /** Centuries overflow a count of nanoseconds: such a hold is kept until released, not lost to an exception. */
    @Test
    void aMinimumHoldOfCenturiesKeepsTheLockUntilItIsReleased() {
        LockTemplate locks = fixture.template();
        LockHandle lock = locks.acquire("centuries", WAIT);
        lock.releaseAfter(Duration.ofDays(110_000));
        assertThat(lock.isValid()).isTrue();
        assertThat(fixture.template().tryAcquire("centuries")).isEmpty();
        lock.release();
        assertThat(fixture.queue("centuries")).isEmpty();
    }

    @Test
    void aLockReleasedAfterAMinimumHoldKeepsOthersOutUntilThenWithoutItsCaller() {
        LockTemplate locks = fixture.template();
        LockTemplate other = fixture.template();
        LockHandle lock = locks.acquire("min-hold-1", Duration.ofSeconds(5));
        long start = System.nanoTime();

        lock.releaseAfter(Duration.ofMillis(300)); // returns at once

        assertThat(lock.isValid()).as("still held").isTrue();
        assertThat(other.tryAcquire("min-hold-1")).isEmpty();
        try (LockHandle next = other.acquire("min-hold-1", Duration.ofSeconds(10))) {
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
            assertThat(next.fencingToken()).isGreaterThan(lock.fencingToken());
        }
        assertThat(lock.isValid()).isFalse();
    }

    /**
     * A minimum hold asked of a lock lost meanwhile sent its removal on the calling thread, so a caller
     * that must not block (a reactive completion, an event loop) waited for DynamoDB's answer. A positive delay
     * never blocks: the removal of a lock no longer valid is sent in the background.
     */
    @Test
    void aMinimumHoldOfALostLockReturnsWithoutWaitingForItsRemoval() throws Exception {
        FaultInjector faults = new FaultInjector();
        // A removal may take a heartbeat (5 s) before it is given up and retried: long enough to tell waiting apart.
        LockTemplate locks = fixture.template(b -> b.leaseDuration(Duration.ofSeconds(15))
                .heartbeatInterval(Duration.ofSeconds(5)), faults);
        LockHandle lock = locks.acquire("min-hold-lost", WAIT);
        CompletableFuture<LockHandle> lost = new CompletableFuture<>();
        lock.onLost(lost::complete);
        fixture.template().breakLock("min-hold-lost", null, lock.fencingToken()); // found by the next renewal
        lost.get(30, TimeUnit.SECONDS);
        CountDownLatch answer = new CountDownLatch(1);
        CountDownLatch removing = new CountDownLatch(1);
        faults.onAnswer(FaultInjector.Step.REMOVE, request -> {
            removing.countDown();
            FaultInjector.await(answer, 60); // DynamoDB slow to answer
        });
        try {
            Future<?> caller = pool.submit(() -> lock.releaseAfter(Duration.ofSeconds(1)));
            assertThat(removing.await(10, TimeUnit.SECONDS)).as("the removal sent").isTrue();
            caller.get(2, TimeUnit.SECONDS); // the answer is still held: returned without waiting for it
        }
        finally {
            answer.countDown();
        }
        Await.until(Duration.ofSeconds(10), "the lost lock's entry removed", () -> fixture.queue("min-hold-lost").isEmpty());
    }

    /**
     * close() fails the waiters, and each takes its entry out of the queue: before the template has terminated, so an
     * owner that closes the client then does not cut the removal off.
     */
    @Test
    void aWaiterFailedByCloseLeavesTheQueueBeforeTheTemplateTerminates() throws Exception {
        LockTemplate holder = fixture.template();
        LockTemplate closing = fixture.templateClosingItsClientOnTermination(b -> b
                .leaseDuration(Duration.ofSeconds(60)).heartbeatInterval(Duration.ofSeconds(1)));
        LockHandle held = holder.acquire("closing-waiter", WAIT);
        CompletableFuture<LockHandle> waiting = closing.acquireAsync(LockRequest.builder("closing-waiter")
                .wait(Duration.ofMinutes(1)).build());
        fixture.awaitQueueLength("closing-waiter", 2);

        closing.close();

        assertThatThrownBy(() -> waiting.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(DynamoLockException.class);
        closing.terminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        assertThat(fixture.queue("closing-waiter")).extracting(QueueSnapshot.Entry::ticket)
                .containsExactly(held.fencingToken());
        held.release();
    }

    /**
     * An acquire that passed its check of the template before close() and reaches its enqueue after it: nothing may
     * be sent once the template could have terminated (its owner may close the client then), so nothing is.
     */
    @Test
    void anAcquireThatReachesItsEnqueueAfterCloseSendsNothing() throws Exception {
        CountDownLatch beginning = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        RequestCounter requests = new RequestCounter();
        LockTemplate locks = fixture.templateClosingItsClientOnTermination(b -> b.listener(new LockListener() {
            @Override
            public void onAcquiring(LockAttempt attempt) { // after the check of the template, before the enqueue
                beginning.countDown();
                await(proceed);
            }
        }), requests);
        Future<LockHandle> acquiring = pool.submit(() -> locks.acquire(LockRequest.builder("late-enqueue")
                .failClosed(true).wait(WAIT).build()));
        assertThat(beginning.await(30, TimeUnit.SECONDS)).isTrue();

        locks.close();
        locks.terminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        proceed.countDown();

        assertThatThrownBy(() -> acquiring.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(DynamoLockException.class)
                .hasMessageContaining("closed");
        assertThat(requests.total()).as("requests sent").isZero();
        assertThat(fixture.queue("late-enqueue")).isEmpty();
    }

    private static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(30, TimeUnit.SECONDS)).isTrue();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * A fail-closed enqueue answered while close() runs: its lease had not started, yet the template must not
     * terminate before the failed acquisition has removed the entry, which would otherwise stay for good.
     */
    @Test
    void aFailClosedEnqueueAnsweredDuringCloseIsRemovedBeforeTheTemplateTerminates() throws Exception {
        PausingInterceptor enqueueAnswer = new PausingInterceptor("UpdateItem", PausingInterceptor.Point.AFTER_ANSWER);
        LockTemplate closing = fixture.templateClosingItsClientOnTermination(b -> { }, enqueueAnswer);
        enqueueAnswer.arm();
        CompletableFuture<LockHandle> acquired = CompletableFuture.supplyAsync(() -> closing.acquire(
                LockRequest.builder("closing-fc").failClosed(true).wait(WAIT).build()));
        enqueueAnswer.awaitPaused(); // landed; its answer held

        closing.close();
        assertThat(closing.terminated().toCompletableFuture()).as("an enqueue in flight").isNotDone();
        enqueueAnswer.resume();

        assertThatThrownBy(() -> acquired.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(DynamoLockException.class);
        closing.terminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        assertThat(fixture.queue("closing-fc")).isEmpty();
    }

    /**
     * A template closed during a minimum hold (a graceful shutdown after the work ended): the fail-closed lock is
     * released, since it would never expire; the fail-open one is left to expire with its lease, keeping others
     * out about that long still.
     */
    @Test
    void closingTheTemplateReleasesAFailClosedLockKeptForAMinimumHoldAndLeavesAFailOpenOneToItsLease() {
        LockTemplate locks = fixture.template();
        LockHandle failClosed = locks.acquire(LockRequest.builder("min-hold-closed").failClosed(true).build());
        LockHandle failOpen = locks.acquire("min-hold-open", Duration.ofSeconds(5));
        failClosed.releaseAfter(Duration.ofHours(1));
        failOpen.releaseAfter(Duration.ofHours(1));

        locks.close();

        assertThat(fixture.queue("min-hold-closed")).as("released at the close").isEmpty();
        assertThat(fixture.queue("min-hold-open")).as("left to its lease").hasSize(1);
        try (LockHandle next = fixture.template().acquire("min-hold-open", Duration.ofSeconds(10))) {
            assertThat(next.fencingToken()).isGreaterThan(failOpen.fencingToken());
        }
    }

    /**
     * Minimum holds begun while the template closes (by a listener of the close's own first release, here) are
     * released by the close as well, not left to timers the process may not outlive.
     */
    @Test
    void minimumHoldsBegunWhileTheTemplateClosesAreReleasedByTheClose() {
        List<LockHandle> late = new CopyOnWriteArrayList<>();
        AtomicBoolean first = new AtomicBoolean(true);
        LockTemplate locks = fixture.template(builder -> builder.listener(new LockListener() {
            @Override
            public void onReleased(LockHandle lock, Duration held) {
                if (first.compareAndSet(true, false)) {
                    late.forEach(other -> other.releaseAfter(Duration.ofHours(1)));
                }
            }
        }));
        LockHandle closing = locks.acquire(LockRequest.builder("min-hold-race").failClosed(true).build());
        for (int i = 0; i < 16; i++) {
            late.add(locks.acquire(LockRequest.builder("min-hold-race-" + i).failClosed(true).build()));
        }
        closing.releaseAfter(Duration.ofHours(1));

        locks.close();

        assertThat(fixture.queue("min-hold-race")).isEmpty();
        for (int i = 0; i < 16; i++) {
            assertThat(fixture.queue("min-hold-race-" + i)).as("min-hold-race-" + i).isEmpty();
        }
    }

    /** A network that loses the requests {@code lost} picks before they are sent. */
    private static ExecutionInterceptor failing(Predicate<SdkRequest> lost) {
        return new ExecutionInterceptor() {
            @Override
            public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
                if (lost.test(context.request())) {
                    throw SdkClientException.create("injected: request lost in the network");
                }
            }
        };
    }

    private int readCounter(DynamoDbClient data) {
        Map<String, AttributeValue> item = data.getItem(b -> b.tableName(fixture.table()).consistentRead(true)
                .key(Map.of("pk", AttributeValue.fromS("data"), "sk", AttributeValue.fromS("counter")))).item();
        return item.isEmpty() ? 0 : Integer.parseInt(item.get("value").n());
    }

    private void writeCounter(DynamoDbClient data, int value) {
        data.putItem(b -> b.tableName(fixture.table()).item(Map.of("pk", AttributeValue.fromS("data"),
                "sk", AttributeValue.fromS("counter"), "value", AttributeValue.fromN(Integer.toString(value)))));
    }
}
