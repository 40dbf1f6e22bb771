package io.dynamolock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dynamolock.core.test.Await;
import io.dynamolock.core.test.LockFixture;
import io.dynamolock.core.test.RecordingListener;
import io.dynamolock.core.test.RequestCounter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * The guarantees of read/write locks, semaphores and locks of several entities, on DynamoDB Local through the
 * public API: exclusion invariants under concurrent callers of several templates (a client each, as separate
 * processes would have), ticket order between readers and writers forced with futures and queue states (no
 * sleeps), all-or-nothing, crash takeover, permits checks, re-entry rules.
 */
@Timeout(120)
class LockPrimitivesContractTests {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final LockFixture fixture = new LockFixture();
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void tearDown() throws Exception {
        threads.shutdownNow();
        fixture.close();
    }

    /** Exclusion only: that readers do hold together is the next test's, where no writer's place can stop them. */
    @Test
    void neverAWriterWithAnyoneElseInsideUnderContention() throws Exception {
        AtomicInteger readers = new AtomicInteger();
        AtomicInteger writers = new AtomicInteger();
        AtomicInteger violations = new AtomicInteger();
        race(3, 15, (caller, locks) -> {
            LockMode mode = caller < 2 ? LockMode.EXCLUSIVE : LockMode.SHARED;
            locks.execute(LockRequest.builder("rw-1").mode(mode).wait(WAIT).build(), lock -> {
                AtomicInteger mine = mode == LockMode.SHARED ? readers : writers;
                mine.incrementAndGet();
                if (writers.get() > 1 || writers.get() == 1 && readers.get() > 0) {
                    violations.incrementAndGet();
                }
                Thread.yield();
                mine.decrementAndGet();
                return null;
            });
        });
        assertThat(violations).hasValue(0);
        assertThat(fixture.queue("rw-1")).isEmpty();
    }

    @Test
    void readersOfSeveralTemplatesHoldTogetherAndAWriterWaitsForAllOfThem() {
        LockRequest read = LockRequest.builder("rw-2").mode(LockMode.SHARED).build();
        List<LockHandle> held = List.of(fixture.template().tryAcquire(read).orElseThrow(),
                fixture.template().tryAcquire(read).orElseThrow(), fixture.template().tryAcquire(read).orElseThrow());
        assertThat(held).allSatisfy(lock -> assertThat(lock.mode()).isEqualTo(LockMode.SHARED));
        LockTemplate writer = fixture.template();
        assertThat(writer.tryAcquire("rw-2")).isEmpty();
        held.get(0).release();
        held.get(1).release();
        assertThat(writer.tryAcquire("rw-2")).as("one reader is still inside").isEmpty();
        held.get(2).release();
        assertThat(writer.tryAcquire("rw-2")).isPresent();
    }

    @Test
    void neverMoreThanItsPermitsInsideASemaphore() throws Exception {
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        race(3, 15, (caller, locks) -> locks.execute(LockRequest.builder("partner-api").permits(3).wait(WAIT).build(),
                lock -> {
                    most.accumulateAndGet(inside.incrementAndGet(), Math::max);
                    Thread.yield();
                    inside.decrementAndGet();
                    return null;
                }));
        assertThat(most.get()).as("never more than its permits inside").isLessThanOrEqualTo(3);
        // That it does let 3 in at once, without a race to depend on:
        LockRequest permit = LockRequest.builder("partner-api").permits(3).build();
        List<Optional<LockHandle>> taken = List.of(fixture.template().tryAcquire(permit),
                fixture.template().tryAcquire(permit), fixture.template().tryAcquire(permit));
        assertThat(taken).as("three permits: three holders at once").allMatch(Optional::isPresent);
        assertThat(fixture.template().tryAcquire(permit)).as("the fourth waits").isEmpty();
        assertThat(fixture.template().queue("partner-api", null).permits()).isEqualTo(3);
    }

    @Test
    void transfersBetweenRandomPairsOfAccountsKeepTheTotalWithoutDeadlockOrTimeOut() throws Exception {
        long[] balances = new long[8];
        java.util.Arrays.fill(balances, 1_000);
        race(4, 40, (caller, locks) -> {
            ThreadLocalRandom random = ThreadLocalRandom.current();
            int from = random.nextInt(8);
            int to = (from + 1 + random.nextInt(7)) % 8;
            long amount = random.nextInt(50);
            // "to" first: the template, not the caller, orders the locks.
            locks.execute(LockRequest.builder(List.of("account-" + to, "account-" + from)).wait(WAIT).build(), lock -> {
                assertThat(lock.fencingTokens()).containsOnlyKeys("account-" + to, "account-" + from);
                long debited = balances[from] - amount;
                Thread.yield(); // a race between two transfers of one account would lose money here
                balances[from] = debited;
                balances[to] = balances[to] + amount;
                return null;
            });
        }); // a deadlock or a time-out fails here
        assertThat(java.util.Arrays.stream(balances).sum()).isEqualTo(8_000);
    }

    @Test
    void aStreamOfReadersCannotHoldBackAWaitingWriter() throws Exception {
        LockTemplate readers = fixture.template();
        LockTemplate writers = fixture.template();
        LockRequest read = LockRequest.builder("rw-3").mode(LockMode.SHARED).wait(WAIT).build();
        LockHandle first = readers.acquire(read);
        CompletableFuture<LockHandle> writer = writers.acquireAsync(LockRequest.builder("rw-3").wait(WAIT).build());
        fixture.awaitQueueLength("rw-3", 2);
        // Readers keep arriving while the first is inside: each queues behind the writer.
        List<CompletableFuture<LockHandle>> later = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            assertThat(readers.tryAcquire(read)).as("a reader behind a waiting writer does not get in").isEmpty();
            later.add(readers.acquireAsync(read));
            fixture.awaitQueueLength("rw-3", 3 + i);
        }
        first.release();
        LockHandle write = writer.get(30, TimeUnit.SECONDS);
        assertThat(later).noneMatch(CompletableFuture::isDone);
        assertThat(fixture.queue("rw-3")).extracting(QueueSnapshot.Entry::mode)
                .containsExactly(LockMode.EXCLUSIVE, LockMode.SHARED, LockMode.SHARED, LockMode.SHARED);
        write.release();
        for (CompletableFuture<LockHandle> reader : later) {
            assertThat(reader.get(30, TimeUnit.SECONDS).fencingToken()).isGreaterThan(write.fencingToken());
        }
    }

    @Test
    void aWriterCannotHoldBackReadersQueuedBeforeTheNextWriterAndItsReleaseHandsOverToAllOfThem() throws Exception {
        // Polls 50 s apart and leases of a minute: only the same-JVM handoff of the release can let the readers in
        // within the test.
        LockTemplate locks = fixture.template(b -> b.pollInterval(Duration.ofSeconds(50), Duration.ofSeconds(50))
                .leaseDuration(Duration.ofSeconds(60)).heartbeatInterval(Duration.ofSeconds(30)));
        LockRequest read = LockRequest.builder("rw-4").mode(LockMode.SHARED).wait(WAIT).build();
        LockHandle writer = locks.acquire(LockRequest.builder("rw-4").wait(WAIT).build());
        CompletableFuture<LockHandle> reader1 = locks.acquireAsync(read);
        CompletableFuture<LockHandle> reader2 = locks.acquireAsync(read);
        fixture.awaitQueueLength("rw-4", 3);
        CompletableFuture<LockHandle> nextWriter = locks.acquireAsync(LockRequest.builder("rw-4").wait(WAIT).build());
        fixture.awaitQueueLength("rw-4", 4);

        writer.release();
        LockHandle read1 = reader1.get(10, TimeUnit.SECONDS);
        LockHandle read2 = reader2.get(10, TimeUnit.SECONDS);
        assertThat(read1.isValid() && read2.isValid()).as("both readers hold at once").isTrue();
        assertThat(nextWriter).isNotDone();
        read1.release();
        Await.notDoneWithin(Duration.ofMillis(500), "one reader is still inside", nextWriter);
        read2.release();
        assertThat(nextWriter.get(10, TimeUnit.SECONDS).fencingToken()).isGreaterThan(read2.fencingToken());
    }

    @Test
    void aCrashedReaderStopsNoOtherReaderAndItsWriterTakesOverAfterTheLease() throws Exception {
        LockTemplate crashing = fixture.template();
        LockRequest read = LockRequest.builder("rw-5").mode(LockMode.SHARED).build();
        crashing.tryAcquire(read).orElseThrow();
        crashing.close(); // no release: its entry stays until its lease ends
        Instant crashedLeaseEnd = fixture.queue("rw-5").get(0).leaseExpiresAt();

        assertThat(fixture.template().tryAcquire(read)).as("another reader goes in beside the dead one")
                .hasValueSatisfying(LockHandle::release);
        try (LockHandle writer = fixture.template().acquire("rw-5", WAIT)) {
            assertThat(Instant.now()).as("taken over once the dead reader's lease ended").isAfterOrEqualTo(crashedLeaseEnd);
            assertThat(fixture.queue("rw-5")).singleElement()
                    .satisfies(entry -> assertThat(entry.ticket()).isEqualTo(writer.fencingToken()));
        }
    }

    /**
     * R7: a dead reader's entry keeps no other reader out, so no reader's wait ever purged it, and each reader's
     * enqueue pushed the item's TTL on: under readers only it stayed for good (review rr21b). A reader granted beside
     * it removes it.
     */
    @Test
    void aDeadReadersEntryIsPurgedByAReaderGrantedBesideIt() {
        deadEntryIsPurgedByACallerGrantedBesideIt(LockRequest.builder("rw-dead").mode(LockMode.SHARED).build());
    }

    /** As above, for a dead holder of a semaphore with permits left: up to N-1 of them stayed. */
    @Test
    void aDeadHoldersEntryOfASemaphoreIsPurgedByACallerGrantedBesideIt() {
        deadEntryIsPurgedByACallerGrantedBesideIt(LockRequest.builder("sem-dead").permits(3).build());
    }

    private void deadEntryIsPurgedByACallerGrantedBesideIt(LockRequest request) {
        LockTemplate crashing = fixture.template();
        LockHandle dead = crashing.tryAcquire(request).orElseThrow();
        crashing.close(); // no release, no heartbeat: as a process that died
        fixture.expire(request.entity(), dead.entryId()); // its lease ran out

        try (LockHandle beside = fixture.template().acquire(request)) {
            Await.until(Duration.ofSeconds(5), "the dead entry purged while the lock is held beside it",
                    () -> fixture.queue(dead.entity()).size() == 1);
            assertThat(fixture.queue(dead.entity())).singleElement()
                    .satisfies(entry -> assertThat(entry.ticket()).isEqualTo(beside.fencingToken()));
        }
    }

    /**
     * One release lets eight readers in beside one dead reader: each was granted with the dead entry ahead, and each
     * sent a purge of it, all but one refused (a write each). One claim per template now.
     */
    @Test
    void readersLetInAtOnceBesideADeadReaderSendOnePurge() throws Exception {
        String entity = "rw-herd";
        LockHandle writer = fixture.template().acquire(LockRequest.builder(entity).wait(Duration.ZERO).build());
        // A reader that queued behind the writer and died: its entry, its lease run out, as its process left it.
        Map<String, AttributeValue> key = Map.of("pk", AttributeValue.fromS(entity), "sk", AttributeValue.fromS("default"));
        long next = Long.parseLong(fixture.item(entity, "default").get("next").n());
        fixture.admin().updateItem(b -> b.tableName(fixture.table()).key(key)
                .updateExpression("SET #t = :n, #next = :after, #e = :e, #o = :o, #m = :shared")
                .conditionExpression("#next = :n")
                .expressionAttributeNames(Map.of("#t", "t#dead", "#next", "next", "#e", "e#dead", "#o", "o#dead",
                        "#m", "m#dead"))
                .expressionAttributeValues(Map.of(":n", AttributeValue.fromN(Long.toString(next)),
                        ":after", AttributeValue.fromN(Long.toString(next + 1)),
                        ":e", AttributeValue.fromN(Long.toString(Instant.now().minusSeconds(1).toEpochMilli())),
                        ":o", AttributeValue.fromS("dead:1"), ":shared", AttributeValue.fromS("S"))));
        LockBreakTests.Steps steps = new LockBreakTests.Steps();
        LockTemplate readers = fixture.template(b -> { }, steps);
        List<CompletableFuture<LockHandle>> waiting = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            waiting.add(readers.acquireAsync(LockRequest.builder(entity).mode(LockMode.SHARED).wait(WAIT).build()));
        }
        fixture.awaitQueueLength(entity, 10);

        writer.release();
        List<LockHandle> held = new ArrayList<>();
        for (CompletableFuture<LockHandle> reader : waiting) {
            held.add(reader.get(10, TimeUnit.SECONDS));
        }
        Await.until(Duration.ofSeconds(5), "the dead reader purged", () -> fixture.queue(entity).size() == 8);
        held.forEach(LockHandle::release); // requests of their own: every grant's purge decision came before them
        assertThat(steps.count(ProtocolStep.PURGE)).as("purges sent by the 8 readers for one dead one").isEqualTo(1);
    }

    /**
     * A dead reader whose lease end no purge's condition can match (5.5, written by hand) stays until broken; the
     * readers granted beside it sent a purge each, every one refused.
     */
    @Test
    void readersGrantedBesideAnEntryNoPurgeCanMatchSendNoPurge() {
        String entity = "rw-unmatchable";
        LockTemplate crashing = fixture.template();
        LockHandle dead = crashing.tryAcquire(LockRequest.builder(entity).mode(LockMode.SHARED).build()).orElseThrow();
        crashing.close();
        fixture.admin().updateItem(b -> b.tableName(fixture.table())
                .key(Map.of("pk", AttributeValue.fromS(entity), "sk", AttributeValue.fromS("default")))
                .updateExpression("SET #e = :e").expressionAttributeNames(Map.of("#e", "e#" + dead.entryId()))
                .expressionAttributeValues(Map.of(":e", AttributeValue.fromN("5.5"))));
        LockBreakTests.Steps steps = new LockBreakTests.Steps();
        LockTemplate readers = fixture.template(b -> { }, steps);

        for (int i = 0; i < 5; i++) {
            readers.acquire(LockRequest.builder(entity).mode(LockMode.SHARED).wait(Duration.ZERO).build()).release();
        }

        assertThat(steps.count(ProtocolStep.PURGE)).isZero();
        assertThat(fixture.queue(entity)).extracting(QueueSnapshot.Entry::entryId).containsExactly(dead.entryId());
    }


    @Test
    void aCrashedHolderOfSeveralEntitiesStopsNoOtherLockAndIsTakenOverAfterTheLease() throws Exception {
        LockTemplate crashing = fixture.template();
        LockHandle both = crashing.acquire(LockRequest.builder(List.of("m-x", "m-y")).build());
        assertThat(both.parts()).extracting(LockHandle::entity).containsExactly("m-x", "m-y");
        crashing.close();
        Instant leaseEnd = fixture.queue("m-y").get(0).leaseExpiresAt();

        LockTemplate others = fixture.template();
        assertThat(others.tryAcquire("m-z")).as("an unrelated lock").hasValueSatisfying(LockHandle::release);
        try (LockHandle taken = others.acquire(LockRequest.builder(List.of("m-y", "m-z")).wait(WAIT).build())) {
            assertThat(Instant.now()).isAfterOrEqualTo(leaseEnd);
            assertThat(taken.fencingTokens()).containsOnlyKeys("m-y", "m-z");
        }
        assertThat(others.tryAcquire("m-x")).as("the other part expired as well").isPresent();
    }

    @Test
    void aLostPartIsALostWhole() throws Exception {
        LockHandle both = fixture.template().acquire(LockRequest.builder(List.of("l-a", "l-b")).build());
        CompletableFuture<LockHandle> lost = new CompletableFuture<>();
        AtomicInteger calls = new AtomicInteger();
        both.onLost(lock -> {
            calls.incrementAndGet();
            lost.complete(lock);
        });
        fixture.purge(both.parts().get(1));
        assertThat(lost.get(10, TimeUnit.SECONDS)).isSameAs(both);
        assertThat(both.isValid()).isFalse();
        assertThat(both.parts().get(0).isValid()).isTrue();
        both.release();
        assertThat(calls).hasValue(1);
        assertThat(fixture.queue("l-a")).isEmpty();
    }

    @Test
    void aPartLostWhileTheNextIsWaitedForIsNeverHandedOutAsHeld() throws Exception {
        CompletableFuture<LockHandle> lost = new CompletableFuture<>();
        LockTemplate locks = fixture.template(b -> b.listener(lostTo(lost)));
        LockHandle holderOfB = fixture.template().acquire("x-b", WAIT);
        AtomicReference<LockHandle> intruderOnA = new AtomicReference<>();
        AtomicBoolean ranBesideTheIntruder = new AtomicBoolean();
        Future<Object> execute = threads.submit(() -> locks.execute(
                LockRequest.builder(List.of("x-a", "x-b")).wait(WAIT).build(), lock -> {
                    ranBesideTheIntruder.set(intruderOnA.get() != null && intruderOnA.get().isValid());
                    return "ran";
                }));
        intruderOnA.set(loseTheFirstPartToAnIntruder("x-a", "x-b", lost));
        holderOfB.release();
        assertThatThrownBy(() -> execute.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(LockLostException.class)
                .hasMessageContaining("x-a");
        assertThat(ranBesideTheIntruder).as("the callback ran while another caller held x-a").isFalse();
        awaitQueue("x-b", 0); // the part granted last was given back
    }

    @Test
    void anAsyncAcquisitionWhosePartWasLostMeanwhileFailsAndGivesBackTheRest() throws Exception {
        CompletableFuture<LockHandle> lost = new CompletableFuture<>();
        LockTemplate locks = fixture.template(b -> b.listener(lostTo(lost)));
        LockHandle holderOfB = fixture.template().acquire("y-b", WAIT);
        CompletableFuture<LockHandle> both = locks.acquireAsync(LockRequest.builder(List.of("y-a", "y-b"))
                .wait(WAIT).build());
        loseTheFirstPartToAnIntruder("y-a", "y-b", lost);
        holderOfB.release();
        assertThatThrownBy(() -> both.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(LockLostException.class);
        awaitQueue("y-b", 0);
    }

    private static LockListener lostTo(CompletableFuture<LockHandle> lost) {
        return new LockListener() {
            @Override
            public void onLost(LockHandle lock) {
                lost.complete(lock);
            }
        };
    }

    /**
     * Once {@code first} is held and {@code second} waited for: {@code first}'s entry is purged (as another
     * process purges a holder paused past its lease), its holder learns it at its heartbeat, and another caller
     * takes {@code first}; returns that caller's lock.
     */
    private LockHandle loseTheFirstPartToAnIntruder(String first, String second, CompletableFuture<LockHandle> lost)
            throws Exception {
        fixture.awaitQueueLength(second, 2);
        fixture.purge(first, fixture.queue(first).get(0).entryId());
        assertThat(lost.get(10, TimeUnit.SECONDS).entity()).isEqualTo(first);
        return fixture.template().tryAcquire(first).orElseThrow();
    }

    @Test
    void completingAnAsyncAcquisitionOfSeveralEntitiesWithAValueGivesUpAsCancellingDoes() throws Exception {
        LockTemplate locks = fixture.template();
        LockHandle other = fixture.template().acquire("v-b", WAIT);
        CompletableFuture<LockHandle> both = locks.acquireAsync(LockRequest.builder(List.of("v-a", "v-b"))
                .wait(WAIT).build());
        fixture.awaitQueueLength("v-b", 2); // v-a is held, v-b waited for
        both.complete(null); // what completeOnTimeout(null, ...) does when its time is up
        awaitQueue("v-a", 0);
        awaitQueue("v-b", 1);
        other.release();
    }

    /**
     * LockOperations.acquireAsync promises an IllegalArgumentException before any request is sent for an invalid
     * request: for several entities the checks of a single acquisition ran inside the chain, and came back as a
     * failed future after the first part had been enqueued.
     */
    @Test
    void anAsyncRequestOfSeveralEntitiesWithABadLeaseOrTooManyPermitsThrowsBeforeAnythingIsSent() {
        LockTemplate locks = fixture.template(b -> b.maxQueueLength(2));
        assertThatThrownBy(() -> locks.acquireAsync(LockRequest.builder(List.of("bo-a", "bo-b"))
                .lease(Duration.ofMillis(100)).build()))
                .as("a lease not longer than the heartbeat").isInstanceOf(LockOptionException.class)
                .hasMessageContaining("lease");
        assertThatThrownBy(() -> locks.acquireAsync(LockRequest.builder(List.of("bo-a", "bo-b")).permits(3).build()))
                .as("more permits than maxQueueLength").isInstanceOf(LockOptionException.class)
                .hasMessageContaining("maxQueueLength 2");
        assertThat(fixture.queue("bo-a")).as("nothing enqueued for the first part").isEmpty();
    }

    @Test
    void severalEntitiesAreAllOrNothingWhenTheWaitRunsOut() {
        LockTemplate locks = fixture.template();
        LockHandle other = fixture.template().acquire("n-b", WAIT);
        assertThatThrownBy(() -> locks.acquire(LockRequest.builder(List.of("n-b", "n-a"))
                .wait(Duration.ofMillis(300)).build()))
                .isInstanceOf(LockWaitTimeoutException.class).hasMessageContaining("n-b");
        assertThat(fixture.queue("n-a")).as("the part taken first was released").isEmpty();
        assertThat(fixture.queue("n-b")).singleElement()
                .satisfies(entry -> assertThat(entry.ticket()).isEqualTo(other.fencingToken()));
        assertThat(locks.tryAcquire(LockRequest.builder(List.of("n-a", "n-b")).build())).isEmpty();
        assertThat(fixture.queue("n-a")).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aTimedOutRequestOfSeveralEntitiesReportsTheWholeWait(boolean async) throws Exception {
        String a = "tw-a-" + async;
        String b = "tw-b-" + async;
        LockHandle holderOfA = fixture.template().acquire(a, WAIT);
        LockHandle holderOfB = fixture.template().acquire(b, WAIT);
        Duration wait = Duration.ofSeconds(3);
        Future<LockHandle> caller = call(fixture.template(), LockRequest.builder(List.of(a, b)).wait(wait).build(),
                async);
        fixture.awaitQueueLength(a, 2);
        // The holder of the first works for a third of the caller's wait (the scenario, not a sync); the rest leaves
        // a loaded machine 2 s to hand the first over, so the wait runs out on the second.
        Thread.sleep(1_000);
        holderOfA.release();

        assertThatThrownBy(() -> caller.get(WAIT.toSeconds(), TimeUnit.SECONDS)).cause()
                .isInstanceOfSatisfying(LockWaitTimeoutException.class, timeout -> {
                    assertThat(timeout.entity()).isEqualTo(b);
                    assertThat(timeout.waited()).as("for the first, then the second").isGreaterThanOrEqualTo(wait);
                });
        awaitQueue(a, 0); // an asynchronous request releases what it took after it failed, on a request thread
        holderOfB.release();
    }

    /** The release of what was taken is not waiting: a slow one does not lengthen the wait the time-out reports. */
    @Test
    void aTimedOutRequestOfSeveralEntitiesDoesNotCountTheReleaseOfWhatItTookAsWaiting() throws Exception {
        Duration slowRelease = Duration.ofSeconds(3);
        AtomicBoolean armed = new AtomicBoolean();
        ExecutionInterceptor slowReleaseOfA = new ExecutionInterceptor() {
            @Override
            public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
                if (context.request() instanceof UpdateItemRequest update
                        && update.key().values().stream().anyMatch(key -> "sr-a".equals(key.s()))
                        && update.updateExpression().contains("REMOVE") // not a renewal
                        && armed.compareAndSet(true, false)) {
                    try {
                        Thread.sleep(slowRelease.toMillis()); // the scenario: a release DynamoDB answers late
                    }
                    catch (InterruptedException ex) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
        };
        LockTemplate caller = fixture.template(builder -> { }, slowReleaseOfA);
        LockHandle holderOfB = fixture.template().acquire("sr-b", WAIT);
        Duration wait = Duration.ofSeconds(1);
        Future<LockHandle> request = call(caller, LockRequest.builder(List.of("sr-a", "sr-b")).wait(wait).build(),
                false);
        fixture.awaitQueueLength("sr-b", 2); // "sr-a" is taken: its next write is the release
        armed.set(true);

        assertThatThrownBy(() -> request.get(WAIT.toSeconds(), TimeUnit.SECONDS)).cause()
                .isInstanceOfSatisfying(LockWaitTimeoutException.class, timeout -> assertThat(timeout.waited())
                        .isGreaterThanOrEqualTo(wait).isLessThan(wait.plus(slowRelease)));
        assertThat(armed).as("the release of sr-a was slowed").isFalse();
        assertThat(fixture.queue("sr-a")).isEmpty();
        holderOfB.release();
    }

    /** Its listeners (the meters' outcome) hear that the waiting part ended for a lost lease, not a caller's cancel. */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aPartLostWhileALaterOneIsWaitedForEndsTheWaitAtOnce(boolean async) throws Exception {
        String a = "lp-a-" + async;
        String b = "lp-b-" + async;
        RecordingListener recorder = new RecordingListener();
        LockHandle holderOfB = fixture.template().acquire(b, WAIT);
        Future<LockHandle> caller = call(fixture.template(t -> t.listener(recorder)),
                LockRequest.builder(List.of(a, b)).wait(WAIT).build(), async);
        fixture.awaitQueueLength(b, 2);

        fixture.purge(a, fixture.queue(a).get(0).entryId()); // broken by an operator, or purged after a pause

        assertThatThrownBy(() -> caller.get(WAIT.toSeconds() / 3, TimeUnit.SECONDS)).as("long before its wait ends")
                .cause().isInstanceOfSatisfying(LockLostException.class, lost -> {
                    assertThat(lost).hasMessageContaining(a);
                    assertThat(lost.wasGranted()).isFalse();
                });
        awaitQueue(b, 1);
        assertThat(fixture.queue(b)).singleElement()
                .satisfies(entry -> assertThat(entry.ticket()).isEqualTo(holderOfB.fencingToken()));
        Await.until(Duration.ofSeconds(10), "the waiting part's outcome",
                () -> recorder.events().stream().anyMatch(e -> e.startsWith("failed " + b)));
        assertThat(recorder.events()).filteredOn(e -> e.startsWith("failed " + b))
                .containsExactly("failed " + b + " LockLostException");
        holderOfB.release();
    }

    private Future<LockHandle> call(LockTemplate locks, LockRequest request, boolean async) {
        return async ? locks.acquireAsync(request, LockScope.empty()) : threads.submit(() -> locks.acquire(request));
    }

    @Test
    void cancellingAnAsyncAcquisitionOfSeveralEntitiesReleasesWhatWasTakenOffTheCancellingThread() throws Exception {
        RecordingListener recorder = new RecordingListener();
        CompletableFuture<Thread> releasedOn = new CompletableFuture<>();
        LockListener releases = new LockListener() {
            @Override
            public void onReleased(LockHandle lock, Duration held) {
                releasedOn.complete(Thread.currentThread());
            }
        };
        LockTemplate locks = fixture.template(b -> b.listener(recorder).listener(releases));
        LockHandle other = fixture.template().acquire("c-b", WAIT);
        CompletableFuture<LockHandle> both = locks.acquireAsync(LockRequest.builder(List.of("c-a", "c-b"))
                .wait(WAIT).build());
        fixture.awaitQueueLength("c-b", 2); // c-a is held, c-b waited for
        assertThat(fixture.queue("c-a")).hasSize(1);
        both.cancel(true);
        // A release is a blocking request, and a reactive caller may cancel on an event loop: it is made on a
        // request thread, not the cancelling one.
        assertThat(releasedOn.get(30, TimeUnit.SECONDS)).isNotSameAs(Thread.currentThread());
        awaitQueue("c-a", 0);
        awaitQueue("c-b", 1);
        other.release();
        // The waiting part's outcome is reported once it has left the queue, which the item may show first.
        Await.until(Duration.ofSeconds(10), "the cancelled part's outcome", () -> recorder.events().size() == 5);
        List<String> events = recorder.events();
        assertThat(events.subList(0, 3)).containsExactly("acquiring c-a", "acquired c-a", "acquiring c-b");
        // The waiting part ends on a dynamolock thread, the taken one is released on a request thread.
        assertThat(events.subList(3, events.size()))
                .containsExactlyInAnyOrder("failed c-b CancellationException", "released c-a");
    }

    @Test
    void aLockOfSeveralEntitiesReportsEveryTokenAndCostsOneRequestPerEntityEachWay() {
        RequestCounter requests = new RequestCounter();
        // A long lease: no heartbeat is sent while the requests are counted.
        LockTemplate locks = fixture.template(b -> b.leaseDuration(Duration.ofSeconds(60))
                .heartbeatInterval(Duration.ofSeconds(30)), requests);
        LockHandle lock = locks.acquire(LockRequest.builder(List.of("t-b", "t-a", "t-b")).build());
        assertThat(requests.total()).as("one enqueue per entity, duplicates once").isEqualTo(2);
        assertThat(lock.fencingTokens()).containsOnlyKeys("t-a", "t-b");
        assertThat(lock.fencingTokens().keySet()).containsExactly("t-a", "t-b");
        assertThat(lock.fencingTokens().get("t-a")).isEqualTo(fixture.queue("t-a").get(0).ticket());
        assertThatThrownBy(lock::fencingToken).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("fencingTokens()");
        lock.release();
        assertThat(requests.total()).isEqualTo(4);
        assertThat(fixture.queue("t-a")).isEmpty();
        assertThat(fixture.queue("t-b")).isEmpty();
    }

    @Test
    void aRequestForOtherPermitsIsRefusedWhileTheQueueHoldsEntriesAndTakesOverAnEmptyOne() {
        LockTemplate locks = fixture.template();
        LockHandle semaphore = locks.acquire(LockRequest.builder("p-1").permits(3).build());
        LockTemplate other = fixture.template();
        assertThatThrownBy(() -> other.acquire(LockRequest.builder("p-1").permits(2).build()))
                .isInstanceOf(LockOptionException.class)
                .hasMessageContaining("entity='p-1'").hasMessageContaining("namespace='default'")
                .hasMessageContaining("admits 3").hasMessageContaining("permits 2");
        assertThatThrownBy(() -> other.acquire("p-1", WAIT)).as("a plain lock is one permit")
                .isInstanceOf(LockOptionException.class);
        assertThat(fixture.queue("p-1")).hasSize(1);
        semaphore.release();
        // The item keeps its counter, and its old permits, once empty: they must not refuse the next users.
        try (LockHandle lock = other.acquire(LockRequest.builder("p-1").permits(2).build())) {
            assertThat(other.queue("p-1", null).permits()).isEqualTo(2);
            assertThat(lock.fencingToken()).isGreaterThan(semaphore.fencingToken());
        }
    }

    /**
     * Instances that asked for 3 permits died (a redeploy's killed pods) and the new version asks for 2: their
     * entries' leases ended, so nobody keeps the old number any more, yet nobody of the old number is left to purge
     * them either. More of them than one purge removes.
     */
    @Test
    void deadEntriesOfOtherPermitsAreTakenOverOnceTheirLeasesEnded() {
        Map<String, AttributeValue> item = new HashMap<>(Map.of("pk", AttributeValue.fromS("p-dead"),
                "sk", AttributeValue.fromS("default"), "next", AttributeValue.fromN("1030"),
                "permits", AttributeValue.fromN("3")));
        long expired = System.currentTimeMillis() - 1;
        for (int i = 0; i < 30; i++) {
            item.put("t#dead-" + i, AttributeValue.fromN(Long.toString(1000 + i)));
            item.put("e#dead-" + i, AttributeValue.fromN(Long.toString(expired)));
        }
        fixture.admin().putItem(b -> b.tableName(fixture.table()).item(item));

        LockTemplate redeployed = fixture.template();
        try (LockHandle lock = redeployed.acquire(LockRequest.builder("p-dead").permits(2).build())) {
            assertThat(lock.fencingToken()).isEqualTo(1030);
            assertThat(redeployed.queue("p-dead", null).permits()).isEqualTo(2);
            assertThat(fixture.queue("p-dead")).extracting(QueueSnapshot.Entry::entryId)
                    .containsExactly(lock.entryId());
        }
    }

    /**
     * As above, with a fail-closed waiter among the killed instances, behind the dead holder: its lease ran out while
     * the holder kept it out, so it never held, and it is removed on that proof, as a waiter behind it would remove
     * it. A fail-closed entry that may have held (nobody ahead of it) keeps the old number until it is broken.
     */
    @Test
    void aDeadFailClosedWaiterThatNeverHeldDoesNotKeepTheOldPermits() {
        long expired = System.currentTimeMillis() - 1;
        Map<String, AttributeValue> item = new HashMap<>(Map.of("pk", AttributeValue.fromS("p-fc"),
                "sk", AttributeValue.fromS("default"), "next", AttributeValue.fromN("1002"),
                "permits", AttributeValue.fromN("1"), "fc", AttributeValue.fromN("1"),
                "expiresAt", AttributeValue.fromN("253402300799")));
        item.putAll(Map.of("t#holder", AttributeValue.fromN("1000"),
                "e#holder", AttributeValue.fromN(Long.toString(expired)), "t#fcwaiter", AttributeValue.fromN("1001"),
                "e#fcwaiter", AttributeValue.fromN(Long.toString(expired)), "k#fcwaiter", AttributeValue.fromN("30000")));
        fixture.admin().putItem(b -> b.tableName(fixture.table()).item(item));
        LockTemplate redeployed = fixture.template();
        try (LockHandle lock = redeployed.acquire(LockRequest.builder("p-fc").permits(2).build())) {
            assertThat(fixture.queue("p-fc")).extracting(QueueSnapshot.Entry::entryId).containsExactly(lock.entryId());
        }

        item.keySet().removeIf(name -> name.endsWith("#holder"));
        item.put("pk", AttributeValue.fromS("p-fc-head"));
        fixture.admin().putItem(b -> b.tableName(fixture.table()).item(item));
        assertThatThrownBy(() -> redeployed.acquire(LockRequest.builder("p-fc-head").permits(2).build()))
                .isInstanceOf(LockOptionException.class).hasMessageContaining("admits 1")
                .as("the configuration is fine: what keeps the old number is a silent entry, to break")
                .hasMessageContaining("1 of them fail-closed, silent since their leases ended (tickets [1001])")
                .hasMessageContaining("breakLock");
        assertThat(fixture.queue("p-fc-head")).extracting(QueueSnapshot.Entry::entryId).containsExactly("fcwaiter");
    }

    @Test
    void aLiveEntryOfOtherPermitsStillRefusesBesideDeadOnes() {
        LockHandle live = fixture.template().acquire(LockRequest.builder("p-mixed").permits(3).build());
        fixture.admin().updateItem(b -> b.tableName(fixture.table())
                .key(Map.of("pk", AttributeValue.fromS("p-mixed"), "sk", AttributeValue.fromS("default")))
                .updateExpression("SET #t = :t, #e = :e")
                .expressionAttributeNames(Map.of("#t", "t#dead", "#e", "e#dead"))
                .expressionAttributeValues(Map.of(":t", AttributeValue.fromN("1"),
                        ":e", AttributeValue.fromN(Long.toString(System.currentTimeMillis() - 1)))));
        LockTemplate other = fixture.template();
        assertThatThrownBy(() -> other.acquire(LockRequest.builder("p-mixed").permits(2).build()))
                .isInstanceOf(LockOptionException.class).hasMessageContaining("admits 3");
        assertThat(fixture.queue("p-mixed")).extracting(QueueSnapshot.Entry::entryId).contains(live.entryId());
        live.release();
    }

    @Test
    void leftoverPermitsAreTakenOverAfterUsersWithALongerLease() {
        // Their TTL is far above ours, so the takeover is sent without lowering it: a second write.
        fixture.template().acquire(LockRequest.builder("p-2").permits(3).lease(Duration.ofMinutes(30)).build())
                .release();
        LockTemplate other = fixture.template();
        try (LockHandle lock = other.acquire(LockRequest.builder("p-2").permits(2).build())) {
            assertThat(other.queue("p-2", null).permits()).isEqualTo(2);
        }
    }

    /**
     * A thread-bound lock's thread is refused a blocking request that could wait behind its own hold, for one entity
     * or several; a semaphore's next permit waits for others only while the thread holds fewer than all of them.
     */
    @Test
    void aThreadBoundHoldRefusesItsThreadARequestThatCouldWaitForItButNotAnotherPermit() {
        LockTemplate locks = fixture.template();
        LockHandle both = locks.acquire(LockRequest.builder(List.of("tb-a", "tb-b")).threadBound(true).build());
        assertThatThrownBy(() -> locks.acquire(LockRequest.builder("tb-a").wait(WAIT).build()))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("entity='tb-a'");
        LockHandle shared = locks.acquire(LockRequest.builder("tb-r").mode(LockMode.SHARED).threadBound(true).build());
        assertThatThrownBy(() -> locks.acquire(LockRequest.builder("tb-r").mode(LockMode.SHARED).wait(WAIT).build()))
                .as("a writer queued between the two would wait for one and block the other")
                .isInstanceOf(IllegalStateException.class);
        LockRequest permitOfTwo = LockRequest.builder("tb-s").permits(2).threadBound(true).wait(WAIT).build();
        LockHandle permit = locks.acquire(permitOfTwo);
        LockHandle second = locks.acquire(permitOfTwo);
        assertThat(second.isValid()).isTrue();
        assertThatThrownBy(() -> locks.acquire(permitOfTwo)).as("every permit is the thread's own")
                .isInstanceOf(IllegalStateException.class);
        second.release();
        permit.release();
        shared.release();
        both.release();
        assertThat(fixture.queue("tb-a")).isEmpty();
    }

    /** A scope whose hold was released joins nothing: its mode and permits refuse nothing either. */
    @Test
    void aRequestInAScopeWhoseHoldWasReleasedQueuesAsAnyoneWould() throws Exception {
        LockTemplate locks = fixture.template();
        String wrote = locks.execute(LockRequest.builder("stale-1").mode(LockMode.SHARED).build(), shared -> {
            shared.release(); // done reading early
            return locks.execute(LockRequest.of("stale-1"), exclusive -> "wrote");
        });
        assertThat(wrote).isEqualTo("wrote");

        LockHandle permit = locks.acquire(LockRequest.builder("stale-2").permits(3).build());
        LockScope carried = LockScope.empty().with(permit);
        permit.release();
        LockHandle single = locks.acquireAsync(LockRequest.builder("stale-2").wait(WAIT).build(), carried)
                .get(30, TimeUnit.SECONDS);
        assertThat(single.isValid()).as("the empty queue takes the new number of permits").isTrue();
        single.release();
    }

    @Test
    void aRequestOfSeveralEntitiesFailsFastOnAPartItCouldNeverTakeBeforeItQueuesForTheOthers() throws Exception {
        LockTemplate locks = fixture.template();
        // Someone else holds the part that sorts first: queueing for it first would wait out the whole wait.
        LockHandle busy = fixture.template().acquire("ff-a", WAIT);
        LockRequest both = LockRequest.builder(List.of("ff-a", "ff-b")).wait(Duration.ofHours(1)).build();
        locks.execute(LockRequest.builder("ff-b").mode(LockMode.SHARED).build(), reading -> {
            assertThatThrownBy(() -> locks.acquire(both)).isInstanceOf(LockOptionException.class)
                    .hasMessageContaining("SHARED").hasMessageContaining("ff-b");
            assertThatThrownBy(() -> locks.acquireAsync(both, locks.currentScope()))
                    .isInstanceOf(LockOptionException.class).hasMessageContaining("ff-b");
            return null;
        });
        LockHandle mine = locks.acquire(LockRequest.builder("ff-b").threadBound(true).build());
        assertThatThrownBy(() -> locks.acquire(both)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ff-b");
        mine.release();
        assertThat(fixture.queue("ff-a")).as("nothing was queued for the other part").singleElement()
                .satisfies(entry -> assertThat(entry.ticket()).isEqualTo(busy.fencingToken()));
        busy.release();
    }

    /**
     * Inside a scope that holds ff-b, a request for {ff-a, ff-b} would wait for ff-a while holding ff-b, and a caller
     * taking {ff-a, ff-b} the plain way holds ff-a and waits for ff-b: a cycle only the waits could end. Refused
     * before anything is sent; a request that does not wait cannot be part of a cycle.
     */
    @Test
    void aRequestOfSeveralEntitiesInsideAScopeHoldingALaterPartOnlyIsRefusedBeforeItWaitsInACycle() throws Exception {
        LockTemplate locks = fixture.template();
        LockRequest both = LockRequest.builder(List.of("mb-a", "mb-b")).wait(WAIT).build();
        locks.execute(LockRequest.builder("mb-b").build(), holdingB -> {
            assertThatThrownBy(() -> locks.acquire(both)).isInstanceOf(LockOptionException.class)
                    .hasMessageContaining("holds mb-b but not mb-a");
            assertThatThrownBy(() -> locks.acquireAsync(both, locks.currentScope()))
                    .isInstanceOf(LockOptionException.class).hasMessageContaining("holds mb-b but not mb-a");
            try (LockHandle tried = locks.tryAcquire(LockRequest.builder(List.of("mb-a", "mb-b")).build())
                    .orElseThrow()) {
                assertThat(tried.fencingTokens()).containsEntry("mb-b", holdingB.fencingToken());
            }
            return null;
        });
        assertThat(fixture.queue("mb-a")).as("nothing was queued for mb-a").isEmpty();
        Boolean joinedFirst = locks.execute(LockRequest.builder("mb-a").build(), holdingA -> locks.execute(both,
                lock -> lock.fencingTokens().get("mb-a") == holdingA.fencingToken()));
        assertThat(joinedFirst).as("inside a scope holding the first part, it joins that and takes the next").isTrue();
    }

    /** An Error (a listener's bug) starting a later part of an asynchronous request fails it and releases the rest. */
    @Test
    void anErrorStartingALaterPartOfAnAsyncRequestOfSeveralEntitiesFailsItAndReleasesWhatWasTaken() throws Exception {
        LockTemplate locks = fixture.template(b -> b.listener(new LockListener() {
            @Override
            public void onAcquiring(LockAttempt attempt) {
                if (attempt.entity().equals("err-b")) {
                    throw new AssertionError("a listener's bug");
                }
            }
        }));
        CompletableFuture<LockHandle> both = locks.acquireAsync(
                LockRequest.builder(List.of("err-a", "err-b")).wait(WAIT).build());
        assertThatThrownBy(() -> both.get(20, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(AssertionError.class);
        awaitQueue("err-a", 0);
    }

    @Test
    void aSemaphoreWithMorePermitsThanTheQueueMayHoldIsRefusedWithTheFix() {
        LockTemplate locks = fixture.template(b -> b.maxQueueLength(2));
        assertThatThrownBy(() -> locks.acquire(LockRequest.builder("sem-big").permits(5).build()))
                .isInstanceOf(LockOptionException.class)
                .hasMessageContaining("permits 5").hasMessageContaining("maxQueueLength 2");
        assertThat(fixture.queue("sem-big")).isEmpty();
    }

    @Test
    void aSharedRequestJoinsAnExclusiveScopeAndAnExclusiveOneInASharedScopeFailsFast() {
        LockTemplate locks = fixture.template();
        locks.execute(LockRequest.of("j-1"), outer -> {
            try (LockHandle inner = locks.acquire(LockRequest.builder("j-1").mode(LockMode.SHARED).build())) {
                assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
                assertThat(inner.mode()).isEqualTo(LockMode.EXCLUSIVE);
            }
            return null;
        });
        locks.execute(LockRequest.builder("j-2").mode(LockMode.SHARED).build(), outer -> {
            assertThatThrownBy(() -> locks.acquire(LockRequest.of("j-2")))
                    .isInstanceOf(LockOptionException.class).hasMessageContaining("SHARED")
                    .hasMessageContaining("j-2");
            return null;
        });
        locks.execute(LockRequest.builder(List.of("j-3", "j-4")).build(), outer -> {
            try (LockHandle inner = locks.acquire(LockRequest.of("j-4"))) {
                assertThat(inner.fencingToken()).isEqualTo(outer.fencingTokens().get("j-4"));
            }
            return null;
        });
        assertThat(fixture.queue("j-4")).isEmpty();
        locks.execute(LockRequest.of("j-5"), outer -> {
            try (LockHandle both = locks.acquire(LockRequest.builder(List.of("j-5", "j-6")).mode(LockMode.SHARED)
                    .build())) {
                assertThat(both.parts()).extracting(LockHandle::mode)
                        .containsExactly(LockMode.EXCLUSIVE, LockMode.SHARED);
                assertThat(both.mode()).as("exclusive only where every part is").isEqualTo(LockMode.SHARED);
            }
            return null;
        });
    }

    /**
     * Fail-closed work inside a fail-open hold of the same lock would run under the fail-open entry, passed on one
     * lease after a crash: refused before anything is sent, for one lock and for a part of several. Fail-open work
     * inside a fail-closed hold joins: the hold is stricter than asked.
     */
    @Test
    void aFailClosedRequestInsideAFailOpenHoldIsRefusedAndAFailOpenOneInsideAFailClosedHoldJoins() {
        LockTemplate locks = fixture.template();
        locks.execute(LockRequest.of("fc-1"), outer -> {
            assertThatThrownBy(() -> locks.acquire(LockRequest.builder("fc-1").failClosed(true).build()))
                    .isInstanceOf(LockOptionException.class).hasMessageContaining("fc-1")
                    .hasMessageContaining("holds the lock fail-open");
            assertThatThrownBy(() -> locks.acquire(LockRequest.builder(List.of("fc-0", "fc-1")).failClosed(true)
                    .build())).isInstanceOf(LockOptionException.class).hasMessageContaining("fc-1");
            return null;
        });
        assertThat(fixture.queue("fc-0")).as("nothing sent for the part that was not held").isEmpty();
        locks.execute(LockRequest.builder("fc-2").failClosed(true).build(), outer -> {
            try (LockHandle inner = locks.acquire(LockRequest.of("fc-2"))) {
                assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
            }
            return null;
        });
        assertThat(fixture.queue("fc-1")).isEmpty();
        assertThat(fixture.queue("fc-2")).isEmpty();
    }

    @Test
    void badModesAndPermitsAreRefusedWithTheFix() {
        assertThatThrownBy(() -> LockRequest.builder("x").permits(0)).isInstanceOf(LockOptionException.class)
                .hasMessageContaining("permits 0").hasMessageContaining("N > 1 for a semaphore");
        assertThatThrownBy(() -> LockRequest.builder("x").mode(LockMode.SHARED).permits(2).build())
                .isInstanceOf(LockOptionException.class).hasMessageContaining("SHARED with permits 2")
                .hasMessageContaining("EXCLUSIVE with 2 permits");
        assertThatThrownBy(() -> LockRequest.builder(List.of())).isInstanceOf(LockOptionException.class)
                .hasMessageContaining("at least one entity");
    }

    /** A round of one caller on the template it shares with others. */
    interface Round {
        void run(int caller, LockTemplate locks) throws Exception;
    }

    /**
     * 8 callers on threads of their own, caller i on template i % {@code templates} (each with a client of its own,
     * as processes would have), each running {@code round} {@code rounds} times; waits for all, failing on the
     * first failure or after 90 s.
     */
    private void race(int templates, int rounds, Round round) throws Exception {
        List<LockTemplate> locks = new ArrayList<>();
        for (int i = 0; i < templates; i++) {
            locks.add(fixture.template());
        }
        List<Future<?>> callers = new ArrayList<>();
        for (int caller = 0; caller < 8; caller++) {
            int id = caller;
            callers.add(threads.submit(() -> {
                for (int i = 0; i < rounds; i++) {
                    round.run(id, locks.get(id % templates));
                }
                return null;
            }));
        }
        for (Future<?> caller : callers) {
            caller.get(90, TimeUnit.SECONDS);
        }
    }

    private void awaitQueue(String entity, int length) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (fixture.queue(entity).size() != length) {
            assertThat(System.nanoTime()).as("queue of %s never reached %d", entity, length).isLessThan(deadline);
            Thread.sleep(10);
        }
    }

}
