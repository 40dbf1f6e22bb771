package io.dynamolock.core.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.dynamolock.core.LockEntryNotFoundException;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockListener;
import io.dynamolock.core.LockLostException;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.LockWaitTimeoutException;
import io.dynamolock.core.test.Await;
import io.dynamolock.core.test.FaultInjector.Fault;
import io.dynamolock.core.test.FaultInjector.Step;
import io.dynamolock.core.test.FaultInjector;
import io.dynamolock.core.test.LockItems;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Throttling, 5xx and timeouts on every step of the protocol, refused before they reach
 * DynamoDB or applied with the answer lost, through {@link FaultInjector} in front of
 * DynamoDB Local. The faulty client makes exactly {@value #ATTEMPTS} attempts per call.
 *
 * <p>Acquire either succeeds or fails with nothing of the caller left in the item; a retried
 * enqueue never takes two tickets; a failed release is retried and otherwise expires;
 * heartbeat failures shorter than the lease are tolerated and longer ones lose the lease.
 */
class InjectedFaultTests extends FaultyTemplateTestSupport {

    static final Duration SHORT = Duration.ofSeconds(3);

    static LockTemplate template(DynamoDbClient client, String owner, Duration lease) {
        return template(client, owner, lease, HEARTBEAT, null);
    }

    static LockTemplate template(DynamoDbClient client, String owner, Duration lease, Duration heartbeat,
            LockListener listener) {
        LockTemplate.Builder builder = LockTemplate.builder(client).tableName(table).ownerName(owner)
                .leaseDuration(lease).heartbeatInterval(heartbeat)
                .pollInterval(Duration.ofMillis(50), Duration.ofSeconds(1));
        if (listener != null) {
            builder.listener(listener);
        }
        return builder.build();
    }

    /** A holder of {@code entity} that stops heartbeating, as a crash does: its entry expires after the lease. */
    void holderThatCrashed() {
        LockTemplate crashed = template(client, "crashed", LEASE);
        crashed.acquire(entity, LONG);
        crashed.close();
    }

    /** The faulty client's owner, heartbeating every 200 ms and polling at least every {@code minPoll}. */
    LockTemplate faultyWithFrequentHeartbeats(Duration minPoll) {
        return LockTemplate.builder(faultyClient).tableName(table).ownerName(faultyOwner).leaseDuration(LEASE)
                .heartbeatInterval(Duration.ofMillis(200)).pollInterval(minPoll, Duration.ofSeconds(1)).build();
    }

    LockItems.Item item() {
        return items.read(entity, "default");
    }

    List<LockItems.Entry> faultyEntries() {
        return item().of(faultyOwner);
    }

    // ---- enqueue ---------------------------------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(value = Fault.class, names = {"THROTTLE_BEFORE", "THROTTLING_BEFORE", "SERVER_ERROR_BEFORE",
            "TIMEOUT_BEFORE"})
    void enqueueRefusedFewerTimesThanTheSdkRetriesStillAcquires(Fault fault) {
        faults.fail(Step.ENQUEUE, fault, ATTEMPTS - 1);

        try (LockHandle lock = faulty.acquire(entity, LONG)) {
            assertThat(faults.attempts(Step.ENQUEUE)).isEqualTo(ATTEMPTS);
            LockItems.Item item = item();
            assertThat(item.entries()).hasSize(1);
            assertThat(item.next()).as("exactly one ticket taken").isEqualTo(lock.fencingToken() + 1);
        }
        assertThat(item().entries()).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(value = Fault.class, names = {"THROTTLE_BEFORE", "THROTTLING_BEFORE", "SERVER_ERROR_BEFORE",
            "TIMEOUT_BEFORE"})
    void enqueueRefusedOnEveryAttemptFailsCleanly(Fault fault) {
        faults.failAlways(Step.ENQUEUE, fault);

        assertThatThrownBy(() -> faulty.acquire(entity, LONG)).isInstanceOf(SdkException.class)
                .hasMessageContaining("Injected");

        assertThat(faults.attempts(Step.ENQUEUE)).isEqualTo(ATTEMPTS);
        assertThat(faultyEntries()).isEmpty();
        assertThat(faulty.activeLocks()).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(value = Fault.class, names = {"LOST_RESPONSE", "SERVER_ERROR_AFTER", "THROTTLE_AFTER", "TIMEOUT_AFTER"})
    void retriedEnqueueAfterALostAnswerTakesOneTicketAndOneEntry(Fault fault) {
        faults.fail(Step.ENQUEUE, fault, 1);

        try (LockHandle lock = faulty.acquire(entity, LONG)) {
            assertThat(faults.attempts(Step.ENQUEUE)).as("the SDK retried the applied enqueue").isEqualTo(2);
            LockItems.Item item = item();
            assertThat(item.entries()).hasSize(1);
            assertThat(item.byTicket().get(0).ticket()).isEqualTo(lock.fencingToken());
            assertThat(item.next()).as("exactly one ticket taken").isEqualTo(lock.fencingToken() + 1);

            // The next caller queues right behind: no phantom entry between them.
            assertThat(clean.tryAcquire(entity)).isEmpty();
        }
        try (LockHandle next = clean.acquire(entity, LONG)) {
            assertThat(item().entries()).hasSize(1);
        }
        assertThat(item().entries()).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(value = Fault.class, names = {"LOST_RESPONSE", "SERVER_ERROR_AFTER", "THROTTLE_AFTER", "TIMEOUT_AFTER"})
    void enqueueWhoseAnswersAreAllLostFailsCleanly(Fault fault) {
        faults.failAlways(Step.ENQUEUE, fault);

        assertThatThrownBy(() -> faulty.acquire(entity, LONG)).isInstanceOf(SdkException.class);

        assertThat(faultyEntries()).as("the applied enqueue was taken out again").isEmpty();
        assertThat(faulty.activeLocks()).isEmpty();
    }

    @Test
    void enqueueWhoseAnswerTimesOutIsRetriedIntoTheSameEntry() {
        // A real SDK attempt timeout: the first enqueue is applied, its answer is held past the 500 ms limit.
        try (DynamoDbClient slow = faults.clientFor(dynamo, ATTEMPTS, Duration.ofMillis(500));
                LockTemplate locks = template(slow, faultyOwner, LEASE)) {
            java.util.concurrent.atomic.AtomicInteger answers = new java.util.concurrent.atomic.AtomicInteger();
            faults.onAnswer(Step.ENQUEUE, request -> {
                if (answers.incrementAndGet() == 1) {
                    FaultInjector.delay(Duration.ofSeconds(3));
                }
            });

            try (LockHandle lock = locks.acquire(entity, LONG)) {
                assertThat(faults.attempts(Step.ENQUEUE)).isEqualTo(2);
                assertThat(item().entries()).hasSize(1);
                assertThat(item().next()).isEqualTo(lock.fencingToken() + 1);
                assertThat(Thread.currentThread().isInterrupted()).isFalse();
            }
        }
        assertThat(item().entries()).isEmpty();
    }

    @Test
    void enqueueAppliedThenThrottledOnTheRetryFailsCleanly() {
        // The first attempt lands but its answer is lost; the SDK's retries are throttled. The error the caller
        // sees is a 400, yet the entry is in the item.
        faults.fail(Step.ENQUEUE, Fault.LOST_RESPONSE, 1);
        faults.failAlways(Step.ENQUEUE, Fault.THROTTLE_BEFORE);

        assertThatThrownBy(() -> faulty.acquire(entity, LONG)).isInstanceOf(SdkException.class);

        assertThat(faults.attempts(Step.ENQUEUE)).isEqualTo(ATTEMPTS);
        assertThat(faultyEntries()).as("the landed enqueue was taken out again").isEmpty();
    }

    // ---- waiting: polls and purges ---------------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(value = Fault.class, names = {"THROTTLE_BEFORE", "SERVER_ERROR_BEFORE", "TIMEOUT_BEFORE",
            "LOST_RESPONSE"})
    void pollsFailingFewerTimesThanTheSdkRetriesDoNotDisturbTheWait(Fault fault) throws Exception {
        LockHandle holder = clean.acquire(entity, LONG);
        faults.fail(Step.READ, fault, ATTEMPTS - 1);
        CountDownLatch polledThroughFaults = faults.awaitAttempts(Step.READ, ATTEMPTS + 1);
        CompletableFuture<LockHandle> waiter = CompletableFuture.supplyAsync(() -> faulty.acquire(entity, LONG));

        assertThat(polledThroughFaults.await(30, TimeUnit.SECONDS)).isTrue();
        holder.release();

        try (LockHandle lock = waiter.get(30, TimeUnit.SECONDS)) {
            assertThat(lock.fencingToken()).isGreaterThan(holder.fencingToken());
        }
        assertThat(item().entries()).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(value = Fault.class, names = {"THROTTLE_BEFORE", "THROTTLING_BEFORE", "SERVER_ERROR_BEFORE",
            "TIMEOUT_BEFORE"})
    void waiterWhosePollsKeepFailingKeepsItsPlaceThenTimesOutCleanly(Fault fault) throws Exception {
        LockHandle holder = clean.acquire(entity, LONG);
        CountDownLatch enqueued = faults.awaitAttempts(Step.ENQUEUE, 1);
        faults.failAlways(Step.READ, fault);
        CountDownLatch retried = faults.awaitAttempts(Step.READ, 2 * ATTEMPTS);
        CompletableFuture<LockHandle> waiter = CompletableFuture.supplyAsync(() -> faulty.acquire(entity, SHORT));

        // A failed poll does not end the wait: the waiter polls again until its deadline, then gives up.
        assertThat(retried.await(30, TimeUnit.SECONDS)).isTrue();
        assertThatThrownBy(() -> waiter.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(LockWaitTimeoutException.class)
                .cause().isInstanceOf(SdkException.class);
        assertThat(enqueued.getCount()).isZero();
        assertThat(faultyEntries()).as("no entry of the failed waiter, and none kept alive by its heartbeat")
                .isEmpty();
        assertThat(faulty.activeLocks()).isEmpty();
        holder.release();
        // Nothing left to block the lock: the next caller gets it at once.
        try (LockHandle next = clean.acquire(entity, Duration.ZERO)) {
            assertThat(next.fencingToken()).isGreaterThan(holder.fencingToken());
        }
        assertThat(item().entries()).isEmpty();
    }

    /** README (faults table): a time-out after failing polls has the last failure as its cause; several entities too. */
    @Test
    void aTimeOutOfSeveralEntitiesWhosePollsKeepFailingHasTheLastFailureAsItsCause() throws Exception {
        String later = entity + "-z"; // sorts after entity: the second part
        LockHandle holder = clean.acquire(later, LONG);
        faults.failAlways(Step.READ, Fault.SERVER_ERROR_BEFORE);
        CountDownLatch retried = faults.awaitAttempts(Step.READ, 2 * ATTEMPTS);
        CompletableFuture<LockHandle> waiter = CompletableFuture.supplyAsync(
                () -> faulty.acquire(LockRequest.builder(List.of(entity, later)).wait(SHORT).build()));

        assertThat(retried.await(30, TimeUnit.SECONDS)).isTrue();
        assertThatThrownBy(() -> waiter.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(LockWaitTimeoutException.class)
                .cause().isInstanceOf(SdkException.class);
        holder.release();
    }

    /**
     * An outage must not flood the log: a waiter polls every few tens of ms, and a queue of 100 would log thousands
     * of stack traces a second. One failure a minute is a WARN with its stack trace, the others DEBUG lines.
     */
    @Test
    void aWaiterWhosePollsKeepFailingWarnsOnce() throws Exception {
        faults.failAlways(Step.READ, Fault.THROTTLE_BEFORE);
        assertThat(warningsOfAWaiterUntil(faults.awaitAttempts(Step.READ, 3 * ATTEMPTS)))
                .singleElement().satisfies(event -> assertThat(event.getThrowableProxy()).isNotNull());
    }

    /** Throttling that fails every other poll, DynamoDB's way with a hot key: no WARN per failure either. */
    @Test
    void aWaiterWhosePollsFailEveryOtherTimeWarnsOnce() throws Exception {
        AtomicInteger reads = new AtomicInteger();
        // A poll is ATTEMPTS attempts: the first attempt of every fourth poll arms a rule that fails all of its
        // attempts.
        faults.onAttempt(Step.READ, request -> {
            if (reads.getAndIncrement() % (4 * ATTEMPTS) == 0) {
                faults.fail(Step.READ, Fault.THROTTLE_BEFORE, ATTEMPTS);
            }
        });
        List<ILoggingEvent> warnings = warningsOfAWaiterUntil(faults.awaitAttempts(Step.READ, 10 * 4 * ATTEMPTS));
        assertThat(faults.injected(Step.READ)).as("attempts failed").isGreaterThanOrEqualTo(9 * ATTEMPTS);
        assertThat(warnings).hasSize(1);
    }

    /** The WARNs of the waiters while one waits behind a holder until {@code polled}; then it gives up its wait. */
    private List<ILoggingEvent> warningsOfAWaiterUntil(CountDownLatch polled) throws Exception {
        LockHandle holder = clean.acquire(entity, LONG);
        Logger waiterLog = (Logger) LoggerFactory.getLogger("io.dynamolock.core.internal.Waiter");
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        waiterLog.addAppender(logged);
        try {
            CompletableFuture<LockHandle> waiter = faulty.acquireAsync(LockRequest.builder(entity).wait(LONG).build());
            assertThat(polled.await(60, TimeUnit.SECONDS)).as("the polls failed").isTrue();
            waiter.cancel(false); // abandons the wait: the entry leaves the queue
        }
        finally {
            waiterLog.detachAppender(logged);
            holder.release();
        }
        return logged.list.stream().filter(event -> event.getLevel() == Level.WARN).toList();
    }

    /**
     * Reads refused while writes pass (an IAM policy without {@code dynamodb:GetItem}, say): the waiter's
     * heartbeats bring it fresh states, but those are not its polls, so the time-out still names the refusal.
     * Polls a second apart, heartbeats every 200 ms: heartbeats land between the last failed poll and the deadline.
     */
    @Test
    void aTimeOutNamesTheRefusedPollsEvenWhenHeartbeatsSucceedAfterTheLastOne() throws Exception {
        LockHandle holder = clean.acquire(entity, LONG);
        faults.failAlways(Step.READ, Fault.THROTTLE_BEFORE);
        CountDownLatch polled = faults.awaitAttempts(Step.READ, ATTEMPTS);
        try (LockTemplate slowPolls = faultyWithFrequentHeartbeats(Duration.ofSeconds(1))) {
            CompletableFuture<LockHandle> waiter = CompletableFuture.supplyAsync(
                    () -> slowPolls.acquire(entity, Duration.ofMillis(1700)));
            assertThat(polled.await(30, TimeUnit.SECONDS)).isTrue();
            CountDownLatch renewed = faults.awaitAttempts(Step.RENEW, 1);
            assertThat(renewed.await(30, TimeUnit.SECONDS)).as("a heartbeat after the failed poll").isTrue();
            assertThatThrownBy(() -> waiter.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(LockWaitTimeoutException.class)
                    .cause().isInstanceOf(SdkException.class);
        }
        holder.release();
    }

    /**
     * Reads refused while writes pass (reads and writes are throttled separately): the waiter's heartbeats show it
     * the dead holder's expired entry, and the purge, a write, takes the lock over. Its own polls never succeed.
     */
    @Test
    void aWaiterWhoseReadsAreRefusedStillTakesOverFromADeadHolderThroughItsHeartbeats() {
        holderThatCrashed();
        faults.failAlways(Step.READ, Fault.THROTTLE_BEFORE);
        try (LockTemplate readsRefused = faultyWithFrequentHeartbeats(Duration.ofMillis(50));
                LockHandle lock = readsRefused.acquire(entity, LONG)) {
            assertThat(item().entries()).hasSize(1);
            assertThat(faults.attempts(Step.PURGE)).isPositive();
        }
    }

    /**
     * A break whose first attempt lands but whose answer is lost: the SDK's retry finds the entry gone. The operator
     * is told that, and that the first attempt may have done it; the entry is gone and the lock free.
     */
    @Test
    void aBreakRetriedAfterALostAnswerSaysTheFirstAttemptMayHaveRemovedTheEntry() {
        LockTemplate stuck = template(client, "stuck", LONG);
        LockHandle held = stuck.acquire(entity, LONG);
        faults.fail(Step.BREAK, Fault.LOST_RESPONSE, 1);

        assertThatThrownBy(() -> faulty.breakLock(entity, "default", held.fencingToken()))
                .isInstanceOf(LockEntryNotFoundException.class)
                .hasMessageContaining("first attempt may have removed it");
        assertThat(faults.attempts(Step.BREAK)).isEqualTo(2);
        assertThat(item().entries()).as("removed by the first attempt").isEmpty();
        try (LockHandle next = clean.acquire(entity, Duration.ZERO)) {
            assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        }
        stuck.close();
    }

    @Test
    void waiterWhosePurgesKeepFailingTimesOutCleanlyAndTheNextOneTakesOver() {
        holderThatCrashed();
        faults.failAlways(Step.PURGE, Fault.THROTTLE_BEFORE);

        assertThatThrownBy(() -> faulty.acquire(entity, SHORT)).isInstanceOf(LockWaitTimeoutException.class)
                .cause().isInstanceOf(SdkException.class);

        assertThat(faults.attempts(Step.PURGE)).as("tried again after a poll interval").isGreaterThan(ATTEMPTS);
        assertThat(faultyEntries()).isEmpty();
        try (LockHandle lock = clean.acquire(entity, LONG)) {
            assertThat(item().entries()).hasSize(1);
        }
        assertThat(item().entries()).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(value = Fault.class, names = {"THROTTLE_BEFORE", "LOST_RESPONSE", "SERVER_ERROR_AFTER"})
    void purgeThatFailsFewerTimesThanTheSdkRetriesStillTakesOver(Fault fault) {
        holderThatCrashed();
        faults.fail(Step.PURGE, fault, 1);

        try (LockHandle lock = faulty.acquire(entity, LONG)) {
            assertThat(faults.attempts(Step.PURGE)).isEqualTo(2);
            assertThat(item().entries()).hasSize(1);
        }
        assertThat(item().entries()).isEmpty();
    }

    // ---- heartbeats ------------------------------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(value = Fault.class, names = {"THROTTLE_BEFORE", "SERVER_ERROR_BEFORE", "TIMEOUT_BEFORE",
            "LOST_RESPONSE", "SERVER_ERROR_AFTER"})
    void heartbeatFailuresShorterThanTheLeaseAreTolerated(Fault fault) throws Exception {
        // Lease 3 s, heartbeat 0.5 s: two failed renewals (every SDK attempt of each) then success,
        // about 1.5 s after the last good one.
        AtomicReference<String> lost = new AtomicReference<>();
        try (LockTemplate locks = template(faultyClient, faultyOwner, Duration.ofSeconds(3), HEARTBEAT, null)) {
            LockHandle lock = locks.acquire(entity, LONG);
            lock.onLost(l -> lost.set("lost"));
            faults.fail(Step.RENEW, fault, 2 * ATTEMPTS);
            CountDownLatch renewedAfterFaults = faults.awaitAttempts(Step.RENEW, 2 * ATTEMPTS + 2);

            assertThat(renewedAfterFaults.await(30, TimeUnit.SECONDS)).isTrue();

            assertThat(faults.injected(Step.RENEW)).isEqualTo(2 * ATTEMPTS);
            assertThat(lost.get()).isNull();
            assertThat(lock.isValid()).isTrue();
            assertThat(clean.tryAcquire(entity)).isEmpty();
            lock.release();
        }
        assertThat(item().entries()).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(value = Fault.class, names = {"THROTTLE_BEFORE", "TIMEOUT_BEFORE", "SERVER_ERROR_AFTER"})
    void heartbeatFailuresPastTheLeaseReportTheLeaseLost(Fault fault) throws Exception {
        CountDownLatch listenerHeard = new CountDownLatch(1);
        LockListener listener = new LockListener() {
            @Override
            public void onLost(LockHandle lock) {
                listenerHeard.countDown();
            }
        };
        try (LockTemplate locks = template(faultyClient, faultyOwner, LEASE, HEARTBEAT, listener)) {
            long start = System.nanoTime();
            LockHandle lock = locks.acquire(entity, LONG);
            CompletableFuture<Long> lostAfter = new CompletableFuture<>();
            lock.onLost(l -> lostAfter.complete(System.nanoTime() - start));
            faults.failAlways(Step.RENEW, fault);

            long lostNanos = lostAfter.get(30, TimeUnit.SECONDS);

            assertThat(Duration.ofNanos(lostNanos)).as("not lost before the lease ran out").isGreaterThanOrEqualTo(LEASE);
            assertThat(lock.isValid()).isFalse();
            assertThat(listenerHeard.await(5, TimeUnit.SECONDS)).isTrue();
            // Nobody purged it yet: the entry is still there, expired, and the next caller takes over.
            try (LockHandle next = clean.acquire(entity, LONG)) {
                assertThat(next.fencingToken()).isGreaterThan(lock.fencingToken());
                assertThat(item().entries()).hasSize(1);
            }
            lock.release(); // after loss: nothing to remove, no error
        }
        assertThat(item().entries()).isEmpty();
    }

    @Test
    void oneRenewalAttemptThatHangsDoesNotCostTheLeaseWhileDynamoDbAnswersTheRetry() throws Exception {
        // A dead pooled connection: one renewal attempt gets no answer, DynamoDB answers everything else. Heartbeat
        // at half the lease: the renewal goes out with half the lease left, so the hung attempt must be cut short
        // while a retry still fits in what is left (it was given a whole heartbeat interval: all of it).
        AtomicBoolean hangNext = new AtomicBoolean();
        CountDownLatch hung = new CountDownLatch(1);
        CountDownLatch never = new CountDownLatch(1);
        faults.onAttempt(Step.RENEW, request -> {
            if (hangNext.compareAndSet(true, false)) {
                hung.countDown();
                FaultInjector.await(never, 30); // until the call's time limit interrupts it
            }
        });
        LockTemplate halfLease = template(faultyClient, faultyOwner + "-half", LEASE, Duration.ofSeconds(1), null);
        LockHandle lock = halfLease.acquire(entity, LONG);
        CountDownLatch lost = new CountDownLatch(1);
        lock.onLost(handle -> lost.countDown());
        hangNext.set(true);
        assertThat(hung.await(5, TimeUnit.SECONDS)).isTrue();

        boolean wasLost = lost.await(3 * LEASE.toMillis(), TimeUnit.MILLISECONDS); // renewals after the hang
        never.countDown();
        assertThat(wasLost).as("lost to one hung attempt though DynamoDB answered the others").isFalse();
        assertThat(lock.isValid()).isTrue();
        lock.release();
        halfLease.close();
        assertThat(item().entries()).isEmpty();
    }

    /**
     * A renewal lands, then the TTL raise its answer calls for hangs (a dead pooled connection) until its time limit,
     * a whole heartbeat interval, well past the lease as confirmed before the renewal. The lease runs from the
     * renewal's answer, so it is not lost (review rr21b: it was recorded only after the raise, and markLost fired
     * while DynamoDB held the new lease end); and the failed raise is sent again by a later write (R9).
     */
    @Test
    void aRenewalThatLandedIsNotLostToATtlRaiseThatHangsAfterIt() throws Exception {
        AtomicBoolean hangNext = new AtomicBoolean(true);
        CountDownLatch hangEnded = new CountDownLatch(1);
        CountDownLatch never = new CountDownLatch(1);
        faults.onAttempt(Step.RAISE_TTL, request -> {
            if (hangNext.compareAndSet(true, false)) {
                try {
                    FaultInjector.await(never, 30); // until the call's time limit interrupts it
                }
                finally {
                    hangEnded.countDown();
                }
            }
        });
        // Renewed 1.5 s after each send of a 2 s lease: a renewal goes out 0.5 s before the lease as confirmed ends,
        // and a raise may take 1.5 s.
        LockTemplate lateRenewals = template(faultyClient, faultyOwner + "-late", LEASE, Duration.ofMillis(1500), null);
        // A long lease waiting behind it, renewed once an hour: only its enqueue moves the TTL.
        LockTemplate longLease = template(client, "long", Duration.ofHours(2), Duration.ofHours(1), null);
        try {
            LockHandle lock = lateRenewals.acquire(entity, LONG);
            CountDownLatch lost = new CountDownLatch(1);
            lock.onLost(handle -> lost.countDown());
            CompletableFuture<LockHandle> waiting = longLease.acquireAsync(LockRequest.builder(entity).wait(LONG)
                    .build());
            Await.until(Duration.ofSeconds(5), "the long lease queued", () -> item().entries().size() == 2);
            // The TTL as the last fail-closed entry's removal leaves it, an hour from now, short of the long lease:
            // the next renewal's answer calls for a raise.
            client.updateItem(b -> b.tableName(table).key(Map.of("pk", AttributeValue.fromS(entity),
                    "sk", AttributeValue.fromS("default"))).updateExpression("SET expiresAt = :ttl")
                    .expressionAttributeValues(Map.of(":ttl", AttributeValue.fromN(Long.toString(
                            System.currentTimeMillis() / 1000 + 3600)))));

            assertThat(hangEnded.await(10, TimeUnit.SECONDS)).as("a raise hung until its time limit").isTrue();

            assertThat(lost.getCount()).as("lost to the raise after a renewal that landed").isEqualTo(1);
            assertThat(lock.isValid()).isTrue();
            long longLeaseEnd = item().entries().values().stream().filter(e -> e.owner().startsWith("long"))
                    .findFirst().orElseThrow().expiresAtMillis();
            Await.until(Duration.ofSeconds(10), "R9: the TTL raised past the long lease by a later write",
                    () -> item().ttlEpochSeconds() * 1000 >= longLeaseEnd + Duration.ofMinutes(55).toMillis());
            lock.release();
            waiting.get(10, TimeUnit.SECONDS).release();
        }
        finally {
            never.countDown();
            lateRenewals.close();
            longLease.close();
        }
    }

    @Test
    void slowEnqueueAnswerDoesNotLetTheEntryLapseBeforeItsFirstHeartbeat() {
        // The enqueue lands at once, but its answer takes 1.5 s of the 2 s lease (a cold JVM, a slow network).
        // Heartbeat 1 s: counted from the answer, the first renewal would come 0.5 s after the lease ran out;
        // counted from the send, it is due at once and has 0.5 s to land.
        faults.onAnswer(Step.ENQUEUE, request -> FaultInjector.delay(Duration.ofMillis(1500)));
        AtomicReference<String> lost = new AtomicReference<>();
        LockTemplate slow = template(faultyClient, faultyOwner + "-slow", LEASE, Duration.ofSeconds(1), null);
        LockHandle lock = slow.acquire(entity, LONG);
        lock.onLost(l -> lost.set("lost"));
        faults.clear();

        // A caller arriving now must find the lease renewed, not one that runs out 0.5 s later.
        assertThatThrownBy(() -> clean.acquire(entity, Duration.ofSeconds(2)).release())
                .isInstanceOf(LockWaitTimeoutException.class);
        assertThat(lost.get()).isNull();
        assertThat(lock.isValid()).isTrue();
        lock.release();
        slow.close();
        assertThat(item().entries()).isEmpty();
    }

    @Test
    void answerThatArrivesAfterTheLeaseRanOutGrantsNothing() throws Exception {
        // The enqueue lands with nobody ahead, but its answer is held until another caller has waited out our lease,
        // purged our entry and taken the lock (a JVM stopped mid-request, a very slow network). The stale answer
        // says "first in the queue": acquire must not return a lock that is already someone else's.
        try (DynamoDbClient slowClient = faults.clientFor(dynamo, 1, Duration.ofSeconds(30));
                LockTemplate slow = template(slowClient, faultyOwner, LEASE)) {
            CountDownLatch enqueued = new CountDownLatch(1);
            CountDownLatch takenOver = new CountDownLatch(1);
            faults.onAnswer(Step.ENQUEUE, request -> {
                enqueued.countDown();
                FaultInjector.await(takenOver, 30);
            });
            CompletableFuture<LockHandle> late = CompletableFuture.supplyAsync(() -> slow.acquire(entity, LONG));
            assertThat(enqueued.await(30, TimeUnit.SECONDS)).isTrue();

            LockHandle current = clean.acquire(entity, LONG);
            takenOver.countDown();

            assertThatThrownBy(() -> late.get(30, TimeUnit.SECONDS).release()).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(LockLostException.class);
            assertThat(current.isValid()).isTrue();
            assertThat(item().entries()).hasSize(1);
            current.release();
        }
        assertThat(item().entries()).isEmpty();
    }

    // ---- release ---------------------------------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(value = Fault.class, names = {"THROTTLE_BEFORE", "SERVER_ERROR_BEFORE", "TIMEOUT_BEFORE"})
    void failedReleaseIsRetriedInTheBackground(Fault fault) {
        LockHandle lock = faulty.acquire(entity, LONG);
        faults.fail(Step.REMOVE, fault, ATTEMPTS);

        lock.release(); // does not throw

        Await.until(Duration.ofSeconds(10), "the entry removed by a background retry", () -> item().entries().isEmpty());
        assertThat(faults.attempts(Step.REMOVE)).isEqualTo(ATTEMPTS + 1);
        assertThat(lock.isValid()).isFalse();
    }

    @Test
    void releaseThatKeepsFailingLeavesTheEntryToExpire() {
        LockHandle lock = faulty.acquire(entity, LONG);
        faults.failAlways(Step.REMOVE, Fault.THROTTLE_BEFORE);

        lock.release();
        LockItems.Entry left = faultyEntries().get(0);

        try (LockHandle next = clean.acquire(entity, LONG)) {
            assertThat(System.currentTimeMillis()).as("taken over only once the lease ran out")
                    .isGreaterThanOrEqualTo(left.expiresAtMillis());
            assertThat(faultyEntries()).isEmpty();
        }
        assertThat(item().entries()).isEmpty();
        assertThat(faults.attempts(Step.REMOVE)).isGreaterThan(ATTEMPTS);
    }

    @ParameterizedTest
    @EnumSource(value = Fault.class, names = {"LOST_RESPONSE", "SERVER_ERROR_AFTER", "THROTTLE_AFTER"})
    void releaseWhoseAnswerIsLostIsRetriedHarmlessly(Fault fault) {
        LockHandle lock = faulty.acquire(entity, LONG);
        LockHandle[] next = new LockHandle[1];
        faults.fail(Step.REMOVE, fault, 1);

        lock.release();

        assertThat(faults.attempts(Step.REMOVE)).isEqualTo(2);
        assertThat(item().entries()).isEmpty();
        next[0] = clean.acquire(entity, Duration.ZERO);
        next[0].release();
    }

    // ---- fail-closed entries and the item's TTL ------------------------------------------------------------

    static final long NEVER = 253_402_300_799L;

    long ttl() {
        return item().ttlEpochSeconds();
    }

    /**
     * A fail-closed holder whose process died keeps its lock until an operator breaks it: TTL must never
     * delete the item. Every write of another entry (its enqueue, its renewals) is checked the instant
     * DynamoDB answered it, before any follow-up request could repair the TTL.
     */
    @Test
    void writesOfOtherEntriesNeverLowerTheTtlOfAnItemHoldingAFailClosedEntry() {
        LockHandle held = deadFailClosedHolder(); // no more renewals, and nothing may remove its entry
        List<Long> ttlsAfterWrites = new CopyOnWriteArrayList<>();
        faults.onAnswer(Step.ENQUEUE, request -> ttlsAfterWrites.add(ttl()));
        faults.onAnswer(Step.RENEW, request -> ttlsAfterWrites.add(ttl()));

        assertThatThrownBy(() -> faulty.acquire(LockRequest.builder(entity).wait(Duration.ofMillis(1200)).build()))
                .isInstanceOf(LockWaitTimeoutException.class);

        assertThat(faults.attempts(Step.RENEW)).as("the waiter renewed its lease while it waited").isPositive();
        assertThat(ttlsAfterWrites).as("TTL right after each write of the fail-open waiter")
                .hasSizeGreaterThanOrEqualTo(2).containsOnly(NEVER);
        assertThat(ttl()).isEqualTo(NEVER);
        clean.breakLock(entity, null, held.fencingToken());
        assertThat(ttl()).as("with no fail-closed entry left, the item can expire again").isLessThan(NEVER);
    }

    /**
     * An operator breaks a dead fail-closed holder while the fail-closed waiter behind it gives up (review rr20a):
     * the break's first write, the last fail-closed entry's, is refused (two are in the item), and the waiter's
     * removal lands before the break's next write, which so removes the last one. That removal must let the item
     * expire by itself: a follow-up request may fail (here every Lower TTL is throttled), and nobody is left to
     * write the item again.
     */
    @Test
    void aBreakThatRacesTheLastOtherFailClosedEntryLeavesAnItemThatCanExpire() {
        LockHandle held = deadFailClosedHolder();
        FaultInjector waiterFaults = new FaultInjector();
        CountDownLatch enqueued = new CountDownLatch(1);
        CountDownLatch left = new CountDownLatch(1);
        waiterFaults.onAnswer(Step.ENQUEUE, request -> enqueued.countDown());
        waiterFaults.onAnswer(Step.REMOVE, request -> {
            if (item().entries().size() == 1) {
                left.countDown(); // the waiter's removal was applied (its first write may be refused)
            }
        });
        try (DynamoDbClient waiterClient = waiterFaults.clientFor(dynamo, ATTEMPTS);
                LockTemplate waiterSide = template(waiterClient, "waiter", LEASE)) {
            CompletableFuture<LockHandle> waiting = waiterSide.acquireAsync(LockRequest.builder(entity)
                    .failClosed(true).wait(Duration.ofSeconds(60)).build());
            FaultInjector.await(enqueued, 10);
            faults.onAttempt(Step.BREAK, request -> {
                if (faults.attempts(Step.BREAK) == 2) { // after the break's first write, before its second
                    waiting.cancel(false);
                    FaultInjector.await(left, 10);
                }
            });
            faults.failAlways(Step.LOWER_TTL, Fault.THROTTLE_BEFORE);

            faulty.breakLock(entity, null, held.fencingToken());

            assertThat(left.getCount()).as("the waiter left between the break's writes").isZero();
            assertThat(item().entries()).isEmpty();
            assertThat(ttl()).as("no entry left, so the item must be able to expire").isLessThan(NEVER);
        }
    }

    /**
     * A break whose count condition is refused twice, as other fail-closed entries leave (fc 2 to 1) and join (1 to
     * 2) between its writes, goes back and forth between its two forms until one applies, and counts its entry out
     * once, also when the answer of the write that applied is lost: fc 1 and TTL "never" with one entry left, fc 0
     * and a finite TTL once it leaves.
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aBreakGoesBackAndForthBetweenItsFormsAsTheCountCrossesOne(boolean loseLastAnswer) {
        LockHandle held = deadFailClosedHolder();
        LockTemplate other = template(client, "other", LEASE);
        CompletableFuture<LockHandle> y = failClosedWaiter(other);
        AtomicReference<CompletableFuture<LockHandle>> z = new AtomicReference<>();
        faults.onAttempt(Step.BREAK, request -> {
            int attempt = faults.attempts(Step.BREAK);
            if (attempt == 2) { // oneOfMore: Y leaves first (fc 2 -> 1)
                y.cancel(false);
                Await.until(Duration.ofSeconds(10), "y left", () -> item().entries().size() == 1);
            }
            else if (attempt == 3) { // lastOne again: Z joins first (fc 1 -> 2)
                z.set(failClosedWaiter(other));
            }
            else if (attempt == 4 && loseLastAnswer) {
                faults.fail(Step.BREAK, Fault.LOST_RESPONSE, 1);
            }
        });
        try {
            if (loseLastAnswer) {
                assertThatThrownBy(() -> faulty.breakLock(entity, null, held.fencingToken()))
                        .isInstanceOf(LockEntryNotFoundException.class);
            }
            else {
                faulty.breakLock(entity, null, held.fencingToken());
            }
            assertThat(faults.attempts(Step.BREAK)).isEqualTo(loseLastAnswer ? 5 : 4);
            assertThat(item().entries()).as("only z").hasSize(1);
            assertThat(failClosedCount()).isEqualTo("1");
            assertThat(ttl()).isEqualTo(NEVER);
            if (!z.get().cancel(false)) {
                z.get().join().release();
            }
            Await.until(Duration.ofSeconds(10), "z left", () -> item().entries().isEmpty());
            assertThat(ttl()).isLessThan(NEVER);
            assertThat(failClosedCount()).isEqualTo("0");
        }
        finally {
            other.close();
        }
    }

    /** A fail-closed holder whose process is gone (its template closed): the runbook's case for a break. */
    private LockHandle deadFailClosedHolder() {
        LockTemplate dead = template(client, "dead", LEASE);
        LockHandle held = dead.acquire(LockRequest.builder(entity).failClosed(true).build());
        dead.close();
        return held;
    }

    /** A fail-closed waiter of {@code locks}, once its entry is in the queue. */
    private CompletableFuture<LockHandle> failClosedWaiter(LockTemplate locks) {
        int before = item().entries().size();
        CompletableFuture<LockHandle> waiting = locks.acquireAsync(LockRequest.builder(entity).failClosed(true)
                .wait(Duration.ofSeconds(60)).build());
        Await.until(Duration.ofSeconds(10), "the fail-closed waiter enqueued", () -> item().entries().size() > before);
        return waiting;
    }

    /** The item's {@code fc} as stored. */
    private String failClosedCount() {
        return client.getItem(b -> b.tableName(table).consistentRead(true).key(Map.of(
                "pk", AttributeValue.fromS(entity), "sk", AttributeValue.fromS("default")))).item().get("fc").n();
    }

    /**
     * A break whose removal was applied but whose answer was lost is retried by the SDK: the retry finds the entry
     * gone and counts nothing, so the other fail-closed entry still keeps the item from expiring.
     */
    @Test
    void aBreakWhoseAnswerIsLostCountsItsFailClosedEntryOutOnce() {
        LockHandle held = deadFailClosedHolder();
        LockTemplate other = template(client, "other", LEASE);
        CompletableFuture<LockHandle> waiting = failClosedWaiter(other);
        faults.onAttempt(Step.BREAK, request -> {
            if (faults.attempts(Step.BREAK) == 2) { // the removal while another fail-closed entry remains
                faults.fail(Step.BREAK, Fault.LOST_RESPONSE, 1);
            }
        });
        try {
            assertThatThrownBy(() -> faulty.breakLock(entity, null, held.fencingToken()))
                    .as("the retry found nothing to remove").isInstanceOf(LockEntryNotFoundException.class);

            assertThat(item().entries()).as("only the waiter is left").hasSize(1);
            assertThat(client.getItem(b -> b.tableName(table).consistentRead(true).key(Map.of(
                    "pk", AttributeValue.fromS(entity), "sk", AttributeValue.fromS("default"))))
                    .item().get("fc").n()).as("fail-closed entries counted").isEqualTo("1");
            assertThat(ttl()).as("the waiter is fail-closed").isEqualTo(NEVER);
        }
        finally {
            waiting.cancel(false);
            other.close();
        }
    }

    /**
     * The last fail-closed entry leaves while a fail-open waiter's enqueue, which saw it, is being answered:
     * whatever the waiter does next must not pin the item for ever.
     */
    @Test
    void anItemCanExpireOnceItsLastFailClosedEntryLeftWhateverAWaiterSawMeanwhile() {
        LockHandle failClosed = clean.acquire(LockRequest.builder(entity).failClosed(true).build());
        AtomicBoolean released = new AtomicBoolean();
        faults.onAnswer(Step.ENQUEUE, request -> {
            if (released.compareAndSet(false, true)) {
                failClosed.release();
            }
        });

        faulty.tryAcquire(entity).ifPresent(LockHandle::release);

        assertThat(released).as("the fail-closed holder left during the waiter's enqueue").isTrue();
        assertThat(item().entries()).isEmpty();
        assertThat(ttl()).as("no entry left, so the item must be able to expire").isLessThan(NEVER);
    }

    /**
     * A fail-closed entry is never purged, so one whose removal failed must not be given up when its lease
     * ends, or it would block the lock until an operator breaks it although its process is alive.
     */
    @Test
    void aFailClosedWaiterWhoseRemovalFailsPastItsLeaseIsRemovedOnceDynamoDbAnswersAgain() {
        LockHandle holder = clean.acquire(entity, LONG);
        faults.failAlways(Step.REMOVE, Fault.SERVER_ERROR_BEFORE);
        assertThatThrownBy(() -> faulty.acquire(LockRequest.builder(entity).failClosed(true)
                .wait(Duration.ofMillis(300)).build())).isInstanceOf(LockWaitTimeoutException.class);
        long leaseEnded = System.nanoTime() + LEASE.toNanos(); // its lease was last confirmed before now
        AtomicLong lastAttempt = new AtomicLong(System.nanoTime());
        faults.onAttempt(Step.REMOVE, request -> lastAttempt.set(System.nanoTime()));

        Await.until(Duration.ofSeconds(15), "a removal attempt after the waiter's lease ended",
                () -> lastAttempt.get() - leaseEnded > 0);
        assertThat(faults.injected(Step.REMOVE)).as("removals refused").isPositive();
        assertThat(faultyEntries()).as("still in the queue while DynamoDB refuses").hasSize(1);
        faults.clear();
        Await.until(Duration.ofSeconds(15), "the fail-closed waiter's entry removed", () -> faultyEntries().isEmpty());

        holder.release();
        clean.tryAcquire(entity).orElseThrow().release();
    }

    /**
     * A poll whose answer is slow ends with the wait: the caller hears of its time-out at its deadline, not once the
     * client gives up on the request (here a client that would wait a minute for it), and leaves the queue. The
     * answer stays held back until the caller has heard.
     */
    @Test
    void aSlowPollDoesNotKeepTheCallerPastItsWait() throws Exception {
        LockHandle holder = clean.acquire(entity, LONG);
        CountDownLatch answer = new CountDownLatch(1);
        faults.onAnswer(Step.READ, request -> {
            try {
                answer.await(60, TimeUnit.SECONDS); // a slow network
            }
            catch (InterruptedException aborted) {
                Thread.currentThread().interrupt(); // the call was timed out: let the client report it
            }
        });
        try (DynamoDbClient patient = faults.clientFor(dynamo, 1, Duration.ofSeconds(60));
                LockTemplate waiter = template(patient, faultyOwner, LEASE)) {
            CompletableFuture<LockHandle> acquiring = CompletableFuture.supplyAsync(
                    () -> waiter.acquire(entity, Duration.ofMillis(300)));
            assertThatThrownBy(() -> acquiring.get(20, TimeUnit.SECONDS)).as("over while the answer is held back")
                    .hasCauseInstanceOf(LockWaitTimeoutException.class);
            assertThat(answer.getCount()).isOne();
            assertThat(faults.attempts(Step.READ)).as("a poll was under way").isPositive();
        }
        finally {
            answer.countDown();
        }
        assertThat(faultyEntries()).isEmpty();
        holder.release();
    }

    /**
     * Two callers take over the permits that an emptied semaphore left behind, at once: the one whose takeover
     * finds the other's landed first queues behind it, since the permits fit now, instead of failing.
     */
    @Test
    void aCallerThatLosesTheRaceToTakeOverLeftoverPermitsQueuesBehindTheWinner() throws Exception {
        clean.acquire(LockRequest.builder(entity).permits(2).build()).release(); // the item keeps permits = 2
        AtomicInteger enqueueAttempts = new AtomicInteger();
        AtomicReference<LockHandle> winner = new AtomicReference<>();
        faults.onAttempt(Step.ENQUEUE, request -> {
            if (enqueueAttempts.incrementAndGet() == 2) { // the faulty caller's takeover, about to go out
                winner.set(clean.acquire(entity, LONG));
            }
        });

        CompletableFuture<LockHandle> loser = CompletableFuture.supplyAsync(() -> faulty.acquire(entity, LONG));
        Await.until(Duration.ofSeconds(10), "the loser queued or failed",
                () -> faultyEntries().size() == 1 || loser.isDone());
        assertThat(loser).as("waiting behind the winner").isNotDone();
        winner.get().release();

        try (LockHandle next = loser.get(10, TimeUnit.SECONDS)) {
            assertThat(next.fencingToken()).isGreaterThan(winner.get().fencingToken());
        }
        assertThat(item().entries()).isEmpty();
    }

    /**
     * A fail-closed hold released after its template closed (a graceful shutdown that lets running work finish):
     * a failed removal is retried as before the close, not dropped with the template's threads, or the entry,
     * never purged and under a "never" TTL, would block the lock until an operator breaks it.
     */
    @Test
    void aFailClosedHoldReleasedAfterTheTemplateClosedIsRemovedDespiteAFailedFirstAttempt() {
        LockHandle lock = faulty.acquire(LockRequest.builder(entity).failClosed(true).wait(LONG).build());
        faulty.close();
        faults.fail(Step.REMOVE, Fault.SERVER_ERROR_BEFORE, ATTEMPTS);

        lock.release(); // does not throw

        Await.until(Duration.ofSeconds(10), "the fail-closed entry removed by a background retry",
                () -> item().entries().isEmpty());
        assertThat(faults.attempts(Step.REMOVE)).isEqualTo(ATTEMPTS + 1);
        clean.tryAcquire(entity).orElseThrow().release();
    }

    /**
     * The same after the hold's lease has ended as well: the timer reported it lost, and nothing was leaving then,
     * so the template's threads had shut down and the failed removal was never retried.
     */
    @Test
    void aFailClosedHoldReleasedAfterTheTemplateClosedAndItsLeaseEndedIsRemovedDespiteAFailedFirstAttempt()
            throws Exception {
        LockHandle lock = faulty.acquire(LockRequest.builder(entity).failClosed(true).wait(LONG).build());
        faulty.close();
        Await.until(Duration.ofSeconds(10), "the hold reported lost", () -> !lock.isValid());
        afterTheTimersCurrentTask(faulty); // the one that reported it, and shut the threads down if it may
        faults.fail(Step.REMOVE, Fault.SERVER_ERROR_BEFORE, ATTEMPTS);

        lock.release();

        Await.until(Duration.ofSeconds(10), "the fail-closed entry removed by a background retry",
                () -> item().entries().isEmpty());
        assertThat(faults.injected(Step.REMOVE)).as("the failed attempts").isEqualTo(ATTEMPTS);
        assertThat(faults.attempts(Step.REMOVE)).isEqualTo(ATTEMPTS + 1);
        clean.tryAcquire(entity).orElseThrow().release();
    }

    /** Waits for the task the template's one timer thread runs now, if the timer still runs. */
    private static void afterTheTimersCurrentTask(LockTemplate template) throws Exception {
        Object timer = field(field(field(template, "engine"), "workers"), "timer");
        try {
            ((ScheduledExecutorService) timer).schedule(() -> { }, 0, TimeUnit.NANOSECONDS)
                    .get();
        }
        catch (RejectedExecutionException shutDown) {
            // already shut down
        }
    }

    private static Object field(Object target, String name) throws ReflectiveOperationException {
        Field field = target.getClass().getDeclaredField(name);
        field.setAccessible(true);
        return field.get(target);
    }

    /**
     * A same-JVM release that lands between a waiter's enqueue and its answer still reaches the waiter: it
     * is granted from the releaser's state, without a poll.
     */
    @Test
    void aSameJvmReleaseDuringTheEnqueueOfAWaiterHandsTheLockOverWithoutAPoll() throws Exception {
        LockHandle holder = faulty.acquire(entity, LONG);
        AtomicBoolean released = new AtomicBoolean();
        faults.onAnswer(Step.ENQUEUE, request -> {
            if (released.compareAndSet(false, true)) {
                holder.release();
            }
        });

        try (LockHandle next = faulty.acquire(entity, LONG)) {
            assertThat(released).isTrue();
            assertThat(next.fencingToken()).isGreaterThan(holder.fencingToken());
            assertThat(faults.attempts(Step.READ)).as("polls").isZero();
        }
    }
}
