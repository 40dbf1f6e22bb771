package io.dynamolock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.dynamolock.core.test.Await;
import io.dynamolock.core.test.LockFixture;
import io.dynamolock.core.test.RequestCounter;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Fail-closed entries and breaking an entry by ticket, in one JVM against DynamoDB Local. (A fail-closed holder
 * killed with SIGKILL is in {@code MultiProcessLockTests}.)
 */
@Timeout(60)
class LockBreakTests {

    /** DynamoDB's TTL of an item that holds a fail-closed entry: 9999-12-31T23:59:59Z. */
    static final long NEVER = Instant.parse("9999-12-31T23:59:59Z").getEpochSecond();

    private final LockFixture fixture = new LockFixture();

    @AfterEach
    void tearDown() throws Exception {
        fixture.close();
    }

    /** Records the protocol step of each request its client sends, and of each one answered. */
    static final class Steps implements ExecutionInterceptor {

        final List<ProtocolStep> sent = new CopyOnWriteArrayList<>();
        final List<ProtocolStep> answered = new CopyOnWriteArrayList<>();

        @Override
        public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
            sent.add(attributes.getAttribute(ProtocolStep.ATTRIBUTE));
        }

        @Override
        public void afterExecution(Context.AfterExecution context, ExecutionAttributes attributes) {
            answered.add(attributes.getAttribute(ProtocolStep.ATTRIBUTE));
        }

        long count(ProtocolStep step) {
            return sent.stream().filter(step::equals).count();
        }
    }

    /** Cuts its client off the network on demand: every request from then on fails, as from a dead process. */
    static final class Cut implements ExecutionInterceptor {

        volatile boolean off;

        @Override
        public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
            if (off) {
                throw SdkClientException.create("cut off");
            }
        }
    }

    /**
     * A fail-closed waiter whose process is gone, queued behind a live holder: its entry cannot leave by itself.
     * Returns its queue entry once its lease has run out.
     */
    private QueueSnapshot.Entry deadFailClosedWaiterBehind(String entity, LockHandle holder) throws Exception {
        Cut cut = new Cut();
        LockTemplate doomed = fixture.template(b -> { }, cut);
        CompletableFuture<LockHandle> dead = CompletableFuture.supplyAsync(() -> doomed.acquire(
                LockRequest.builder(entity).wait(Duration.ofSeconds(30)).failClosed(true).build()));
        fixture.awaitQueueLength(entity, 2);
        cut.off = true;
        assertThatThrownBy(() -> dead.get(10, TimeUnit.SECONDS)).as("its lease ran out while it waited")
                .hasCauseInstanceOf(DynamoLockException.class);
        QueueSnapshot.Entry entry = fixture.queue(entity).get(1);
        assertThat(entry.failClosed()).isTrue();
        assertThat(entry.leaseExpiresAt()).isBefore(Instant.now());
        assertThat(holder.isValid()).isTrue();
        return entry;
    }

    /**
     * A time-out behind a silent fail-closed holder: raising the wait would never help, only a break does. The
     * message said "1 live entry" and "Raise the wait"; it names the silent entry's ticket and the break now.
     */
    @Test
    void aTimeOutBehindASilentFailClosedHolderNamesItsTicketAndTheBreak() {
        Cut cut = new Cut();
        LockTemplate dying = fixture.template(b -> { }, cut);
        LockHandle dead = dying.acquire(LockRequest.builder("silent").failClosed(true).build());
        cut.off = true;
        Await.until(Duration.ofSeconds(10), "its lease ended unrenewed",
                () -> fixture.queue("silent").get(0).isSilentAt(Instant.now()));

        assertThatThrownBy(() -> fixture.template().acquire("silent", Duration.ofMillis(300)))
                .isInstanceOf(LockWaitTimeoutException.class)
                .hasMessageContaining("1 entry still ahead in the queue [" + dead.owner() + "]")
                .hasMessageContaining("The fail-closed entry with ticket " + dead.fencingToken() + " of "
                        + dead.owner() + " has not been renewed since ")
                .hasMessageContaining("it never expires. If its process is dead, break it: LockTemplate.breakLock("
                        + "\"silent\", \"default\", " + dead.fencingToken() + ")")
                .message().doesNotContain("Raise the wait");
    }

    /** The advice's call is Java to paste: a name with a backslash or a quote is written as a literal of it. */
    @Test
    void theBreakAdviceWritesTheEntityAsAJavaLiteral() {
        String entity = "tenant\\7 \"q\"";
        Cut cut = new Cut();
        LockHandle dead = fixture.template(b -> { }, cut).acquire(LockRequest.builder(entity).failClosed(true).build());
        cut.off = true;
        Await.until(Duration.ofSeconds(10), "its lease ended unrenewed",
                () -> fixture.queue(entity).get(0).isSilentAt(Instant.now()));

        assertThatThrownBy(() -> fixture.template().acquire(entity, Duration.ofMillis(300)))
                .isInstanceOf(LockWaitTimeoutException.class)
                .hasMessageContaining("LockTemplate.breakLock(\"tenant\\\\7 \\\"q\\\"\", \"default\", "
                        + dead.fencingToken() + ")");
        fixture.purge(dead);
    }

    /** Two silent fail-closed readers ahead of a writer: both keep it out, and the message names both. */
    @Test
    void aTimeOutBehindTwoSilentFailClosedReadersNamesBoth() {
        Cut cutA = new Cut();
        Cut cutB = new Cut();
        LockRequest read = LockRequest.builder("readers").failClosed(true).mode(LockMode.SHARED).build();
        LockHandle a = fixture.template(x -> { }, cutA).acquire(read);
        LockHandle b = fixture.template(x -> { }, cutB).acquire(read);
        cutA.off = true;
        cutB.off = true;
        Await.until(Duration.ofSeconds(10), "both leases ended unrenewed",
                () -> fixture.queue("readers").stream().allMatch(e -> e.isSilentAt(Instant.now())));

        assertThatThrownBy(() -> fixture.template().acquire("readers", Duration.ofMillis(300)))
                .isInstanceOf(LockWaitTimeoutException.class)
                .hasMessageContaining("2 entries still ahead")
                .hasMessageContaining("The fail-closed entries with tickets " + a.fencingToken() + " of " + a.owner()
                        + " and " + b.fencingToken() + " of " + b.owner() + " have not been renewed since ")
                .hasMessageContaining("LockTemplate.breakLock(\"readers\", \"default\", ticket) for each");
    }

    @Test
    void breakWithAStaleTicketRemovesNothing() {
        LockTemplate locks = fixture.template();
        long stale;
        try (LockHandle first = locks.acquire("stale", Duration.ZERO)) {
            stale = first.fencingToken();
        }
        try (LockHandle newer = locks.acquire("stale", Duration.ZERO)) {
            assertThatThrownBy(() -> fixture.template().breakLock("stale", null, stale))
                    .isInstanceOf(LockEntryNotFoundException.class)
                    .hasMessageContaining("No entry with ticket " + stale)
                    .hasMessageContaining("entity='stale' namespace='default'")
                    .hasMessageContaining("the queue holds [" + newer.fencingToken() + " (" + newer.owner() + ")]")
                    .hasMessageContaining("nothing was removed");
            assertThat(fixture.queue("stale")).extracting(QueueSnapshot.Entry::ticket)
                    .containsExactly(newer.fencingToken());
            assertThat(newer.isValid()).isTrue();
        }
    }

    /**
     * A silent fail-closed holder resumes and its renewal lands between the break's read and its write: the break
     * still removes the entry (an operator may break a live holder), but reports it as its write removed it, renewed,
     * not as read before, silent (review rr21e: the report, the WARN line and the endpoint's status said silent).
     */
    @Test
    void aBreakReportsTheEntryAsItsWriteRemovedItNotAsItWasReadBefore() {
        Cut cut = new Cut();
        LockHandle held = fixture.template(b -> { }, cut).acquire(LockRequest.builder("resumed").wait(Duration.ZERO)
                .failClosed(true).build());
        cut.off = true; // stopped (GC, SIGSTOP, partition): none of its renewals reaches DynamoDB for now
        setLeaseEnd("resumed", held, Instant.now().minusSeconds(5).toEpochMilli()); // as if its lease ran out
        assertThat(fixture.queue("resumed")).singleElement()
                .satisfies(entry -> assertThat(entry.isSilentAt(Instant.now())).as("silent when read").isTrue());
        long renewedUntil = Instant.now().plus(Duration.ofMinutes(1)).toEpochMilli();
        ExecutionInterceptor resumesBeforeTheBreak = new ExecutionInterceptor() {
            @Override
            public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
                if (attributes.getAttribute(ProtocolStep.ATTRIBUTE) == ProtocolStep.BREAK) {
                    setLeaseEnd("resumed", held, renewedUntil); // its process resumed: its renewal lands first
                }
            }
        };

        BrokenLock broken = fixture.template(b -> { }, resumesBeforeTheBreak).breakLock("resumed", null,
                held.fencingToken());

        assertThat(fixture.queue("resumed")).as("the renewed entry was removed all the same").isEmpty();
        assertThat(broken.entry().leaseExpiresAt()).as("the lease end the break removed")
                .isEqualTo(Instant.ofEpochMilli(renewedUntil));
        assertThat(broken.entry().isSilentAt(Instant.now())).as("reported alive, as it was when removed").isFalse();
        assertThat(broken.entry().ticket()).isEqualTo(held.fencingToken());
    }

    /** Writes the lease end of {@code lock}'s entry as its own renewal would (or would have, for a past one). */
    private void setLeaseEnd(String entity, LockHandle lock, long leaseEndMillis) {
        fixture.admin().updateItem(b -> b.tableName(fixture.table())
                .key(Map.of("pk", AttributeValue.fromS(entity), "sk", AttributeValue.fromS("default")))
                .updateExpression("SET #e = :e")
                .expressionAttributeNames(Map.of("#e", "e#" + lock.entryId()))
                .expressionAttributeValues(Map.of(":e", AttributeValue.fromN(Long.toString(leaseEndMillis)))));
    }

    @Test
    void breakOfALockWithoutQueueSaysSo() {
        assertThatThrownBy(() -> fixture.template().breakLock("never-locked", "ns", 42))
                .isInstanceOf(LockEntryNotFoundException.class)
                .hasMessageContaining("No entry with ticket 42 in the queue of entity='never-locked' namespace='ns'")
                .hasMessageContaining("the queue holds []");
    }

    @Test
    void aBrokenHolderThatReleasesBeforeAnyHeartbeatLearnsOfTheLossFromItsRelease() throws Exception {
        List<String> events = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> reported = new CompletableFuture<>();
        LockTemplate holderSide = fixture.template(b -> b.leaseDuration(Duration.ofSeconds(60))
                .heartbeatInterval(Duration.ofSeconds(30)).listener(new LockListener() {
                    @Override
                    public void onReleased(LockHandle lock, Duration held) {
                        events.add("released " + lock.fencingToken());
                    }

                    @Override
                    public void onLost(LockHandle lock) {
                        events.add("lost " + lock.fencingToken());
                        reported.complete(null);
                    }
                }));
        LockHandle kept = holderSide.acquire("kept", Duration.ZERO);
        LockHandle held = holderSide.acquire("released-broken", Duration.ZERO);
        CompletableFuture<LockHandle> lost = new CompletableFuture<>();
        held.onLost(lost::complete);
        fixture.template().breakLock("released-broken", null, held.fencingToken());
        assertThat(held.isValid()).as("no heartbeat has told it yet").isTrue();

        held.release();
        kept.release();

        assertThat(held.wasLost()).isTrue();
        assertThat(kept.wasLost()).isFalse();
        assertThat(lost.get(10, TimeUnit.SECONDS)).isSameAs(held);
        reported.get(10, TimeUnit.SECONDS);
        assertThat(events).containsExactlyInAnyOrder("lost " + held.fencingToken(), "released " + kept.fencingToken());
    }

    @Test
    void brokenLiveHolderLearnsItAtItsNextHeartbeatAndTheNextWaiterGoesAhead() throws Exception {
        Steps holderSteps = new Steps();
        LockTemplate holderSide = fixture.template(b -> { }, holderSteps);
        Steps operatorSteps = new Steps();
        LockTemplate operator = fixture.template(b -> { }, operatorSteps);
        LockHandle held = holderSide.acquire("live", Duration.ZERO);
        AtomicLong renewalsAtLoss = new AtomicLong(-1);
        CompletableFuture<LockHandle> lost = new CompletableFuture<>();
        held.onLost(handle -> {
            renewalsAtLoss.set(holderSteps.count(ProtocolStep.RENEW));
            lost.complete(handle);
        });
        CompletableFuture<LockHandle> waiter = CompletableFuture.supplyAsync(
                () -> operator.acquire("live", Duration.ofSeconds(30)));
        fixture.awaitQueueLength("live", 2);

        long renewalsAtBreak = holderSteps.count(ProtocolStep.RENEW);
        BrokenLock broken = operator.breakLock("live", "default", held.fencingToken());

        assertThat(broken.entity()).isEqualTo("live");
        assertThat(broken.entry().ticket()).isEqualTo(held.fencingToken());
        assertThat(broken.entry().entryId()).isEqualTo(held.entryId());
        assertThat(broken.entry().failClosed()).isFalse();
        LockHandle next = waiter.get(10, TimeUnit.SECONDS);
        assertThat(next.fencingToken()).as("the broken holder's token is stale").isGreaterThan(held.fencingToken());
        assertThat(lost.get(10, TimeUnit.SECONDS)).isSameAs(held);
        assertThat(renewalsAtLoss.get() - renewalsAtBreak).as("renewals sent after the break until the loss")
                .isBetween(0L, 1L);
        assertThat(held.isValid()).isFalse();
        assertThat(operatorSteps.sent).containsSubsequence(ProtocolStep.READ, ProtocolStep.BREAK);
        held.release();
        assertThat(next.isValid()).as("the broken holder's release removes nothing of the next").isTrue();
        next.release();
        assertThat(fixture.queue("live")).isEmpty();
    }

    /**
     * whenLost() is for stopping the work a lock guards: it completes for a loss though other locks' lost-lease
     * callbacks have blocked every thread callbacks run on, and for a lock of several entities when one part is lost.
     */
    @Test
    void whenLostCompletesThoughEveryCallbackThreadIsBlocked() throws Exception {
        LockTemplate holderSide = fixture.template();
        LockTemplate operator = fixture.template();
        CountDownLatch free = new CountDownLatch(1);
        CountDownLatch blocking = new CountDownLatch(4);
        try {
            for (int i = 0; i < 8; i++) { // more than the template's callback threads
                LockHandle stuck = holderSide.acquire("stuck-" + i, Duration.ZERO);
                stuck.onLost(lost -> {
                    blocking.countDown();
                    awaitQuietly(free);
                });
                operator.breakLock("stuck-" + i, null, stuck.fencingToken());
            }
            assertThat(blocking.await(10, TimeUnit.SECONDS)).as("every callback thread is blocked").isTrue();
            LockHandle several = holderSide.acquire(LockRequest.builder(List.of("part-a", "part-b")).build());
            CompletableFuture<LockHandle> lost = several.whenLost();
            operator.breakLock("part-b", null, several.fencingTokens().get("part-b"));
            assertThat(lost.get(10, TimeUnit.SECONDS)).isSameAs(several);
            several.release();
        }
        finally {
            free.countDown();
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void failClosedAcquireAndReleaseTakeOneRequestEachAndKeepTheItemFromExpiring() {
        RequestCounter counter = new RequestCounter();
        LockTemplate locks = fixture.template(b -> { }, counter);

        LockHandle lock = locks.acquire(LockRequest.builder("closed").wait(Duration.ZERO).failClosed(true).build());
        assertThat(counter.snapshot()).isEqualTo(Map.of("UpdateItem", 1L));
        Map<String, AttributeValue> item = fixture.item("closed", "default");
        assertThat(item.get("k#" + lock.entryId()).n()).as("marked with its lease").isEqualTo("2000");
        assertThat(Long.parseLong(item.get("expiresAt").n())).isEqualTo(NEVER);
        assertThat(fixture.queue("closed")).singleElement().satisfies(entry -> {
            assertThat(entry.failClosed()).isTrue();
            assertThat(entry.lastRenewedAt()).isEqualTo(entry.leaseExpiresAt().minus(LockFixture.LEASE));
            assertThat(entry.isSilentAt(Instant.now())).isFalse();
        });

        lock.release();
        assertThat(counter.snapshot()).isEqualTo(Map.of("UpdateItem", 2L));
        item = fixture.item("closed", "default");
        assertThat(item).doesNotContainKey("k#" + lock.entryId());
        assertThat(Long.parseLong(item.get("expiresAt").n())).as("the unused item may expire again")
                .isLessThan(Instant.now().plus(Duration.ofHours(2)).getEpochSecond());
    }

    @Test
    void breakingAnEntryOfTheBreakingTemplateEndsItsLeaseAtOnce() {
        LockTemplate locks = fixture.template();
        LockHandle held = locks.acquire("mine", Duration.ZERO);

        locks.breakLock("mine", null, held.fencingToken());

        assertThat(held.isValid()).as("the template that broke it knows at once, not at its next heartbeat")
                .isFalse();
        assertThat(fixture.queue("mine")).isEmpty();
    }

    @Test
    void theItemStaysImmortalUntilItsLastFailClosedEntryLeaves() throws Exception {
        LockTemplate locks = fixture.template();
        LockTemplate other = fixture.template();
        LockRequest failClosed = LockRequest.builder("two").failClosed(true).wait(Duration.ofSeconds(30)).build();
        LockHandle first = locks.acquire(failClosed);
        CompletableFuture<LockHandle> second = CompletableFuture.supplyAsync(() -> other.acquire(failClosed));
        fixture.awaitQueueLength("two", 2);

        first.release();
        LockHandle secondHeld = second.join();
        assertThat(Long.parseLong(fixture.item("two", "default").get("expiresAt").n()))
                .as("another fail-closed entry is left").isEqualTo(NEVER);
        secondHeld.release();
        assertThat(Long.parseLong(fixture.item("two", "default").get("expiresAt").n()))
                .as("the last one left: the item may expire").isLessThan(NEVER);
    }

    /**
     * execute runs its callback holding the lock: a callback that returns after its entry was broken (another may
     * hold the lock now) must not look like work done under the lock.
     */
    @Test
    void executeWhoseLockWasBrokenWhileItsCallbackRanThrowsLockLost() {
        LockTemplate locks = fixture.template();
        LockTemplate operator = fixture.template();
        AtomicReference<LockHandle> handle = new AtomicReference<>();
        assertThatThrownBy(() -> locks.execute(LockRequest.of("broken-run"), lock -> {
            handle.set(lock);
            operator.breakLock("broken-run", null, lock.fencingToken());
            return "work done";
        })).isInstanceOfSatisfying(LockLostException.class, lost -> {
            assertThat(lost.wasGranted()).as("the callback ran").isTrue();
            assertThat(lost).hasMessageContaining("entity='broken-run'")
                    .hasMessageContaining("fencing token " + handle.get().fencingToken());
        });
        assertThat(fixture.queue("broken-run")).isEmpty();
    }

    /**
     * A joined release checks nothing in DynamoDB, so a joined handle's wasLost() follows its entry after its
     * release: a loss that happened while it held is reported once the outer release finds it (erring towards
     * "may have overlapped", never away from it).
     */
    @Test
    void aJoinedHandleBrokenWhileItHeldIsLostOnceTheOuterReleaseFindsIt() {
        LockTemplate locks = fixture.template(b -> b.leaseDuration(Duration.ofSeconds(60))
                .heartbeatInterval(Duration.ofSeconds(30)));
        LockTemplate operator = fixture.template();
        AtomicReference<LockHandle> joined = new AtomicReference<>();
        AtomicReference<Object> nested = new AtomicReference<>();
        assertThatThrownBy(() -> locks.execute(LockRequest.of("joined-broken"), outer -> {
            // A nested execute's release is a joined one: it reports only a loss known by then (none here).
            nested.set(locks.execute(LockRequest.of("joined-broken"), inner -> {
                joined.set(inner);
                operator.breakLock("joined-broken", null, inner.fencingToken());
                return "inner done";
            }));
            return "outer done";
        })).as("the outermost release finds the entry gone").isInstanceOf(LockLostException.class);
        assertThat(nested.get()).isEqualTo("inner done");
        assertThat(joined.get().wasLost()).as("broken while the joined handle held it").isTrue();
    }

    /** A callback that throws keeps its own exception; the loss rides along, suppressed. */
    @Test
    void executeWhoseCallbackThrowsAfterItsLockWasBrokenThrowsTheCallbacksException() {
        LockTemplate locks = fixture.template();
        LockTemplate operator = fixture.template();
        assertThatThrownBy(() -> locks.execute(LockRequest.of("broken-throw"), lock -> {
            operator.breakLock("broken-throw", null, lock.fencingToken());
            throw new IllegalStateException("the callback's own failure");
        })).isInstanceOf(IllegalStateException.class).hasMessage("the callback's own failure")
                .satisfies(thrown -> assertThat(thrown.getSuppressed())
                        .singleElement().isInstanceOf(LockLostException.class));
    }

    /**
     * wasGranted() says whether work may have run: work under a hold ran, so a loss that escapes it is granted to
     * the caller of execute, whatever nested acquisition threw it. Here the scope's own hold is broken, then joined.
     */
    @Test
    void aLossThatEscapesWorkUnderALockIsGrantedWhenTheScopesHoldWasBrokenAndJoined() {
        LockTemplate locks = fixture.template();
        AtomicReference<LockLostException> joined = new AtomicReference<>();
        assertThatThrownBy(() -> locks.execute(LockRequest.of("nest-1"), outer -> {
            locks.breakLock("nest-1", null, outer.fencingToken()); // its own entry: the work so far ran unprotected
            try {
                locks.acquire(LockRequest.of("nest-1")).release();
            }
            catch (LockLostException lost) {
                joined.set(lost);
            }
            return locks.execute(LockRequest.of("nest-1"), inner -> "never runs");
        })).isInstanceOfSatisfying(LockLostException.class, lost -> assertThat(lost.wasGranted()).isTrue());
        assertThat(joined.get().wasGranted()).as("the scope's hold was granted and its work ran").isTrue();
    }

    /** A nested wait for another lock loses its place: not granted itself, yet the enclosing work ran. */
    @Test
    void aLossThatEscapesWorkUnderALockIsGrantedWhenANestedWaitLostItsPlace() throws Exception {
        LockTemplate locks = fixture.template();
        LockTemplate other = fixture.template();
        AtomicReference<LockLostException> nested = new AtomicReference<>();
        try (LockHandle holder = other.acquire("nest-b", Duration.ZERO)) {
            CompletableFuture<Void> breaker = CompletableFuture.runAsync(() -> {
                awaitQueueLength("nest-b", 2);
                other.breakLock("nest-b", null, fixture.queue("nest-b").get(1).ticket());
            });
            assertThatThrownBy(() -> locks.execute(LockRequest.of("nest-a"), outer -> {
                try {
                    return locks.execute(LockRequest.builder("nest-b").wait(Duration.ofSeconds(30)).build(),
                            inner -> "never runs");
                }
                catch (LockLostException lost) {
                    nested.set(lost);
                    throw lost;
                }
            })).isInstanceOfSatisfying(LockLostException.class, lost -> {
                assertThat(lost.wasGranted()).as("execute's work ran").isTrue();
                assertThat(lost).hasCause(nested.get());
            });
            assertThat(nested.get().wasGranted()).as("the nested wait itself was never granted").isFalse();
            breaker.join();
        }
    }

    /** The nested loss comes wrapped, as a join() of an async acquisition throws it: granted all the same. */
    @Test
    void aWrappedLossThatEscapesWorkUnderALockIsGranted() throws Exception {
        LockTemplate locks = fixture.template();
        LockTemplate other = fixture.template();
        try (LockHandle holder = other.acquire("wrap-b", Duration.ZERO)) {
            CompletableFuture<Void> breaker = CompletableFuture.runAsync(() -> {
                awaitQueueLength("wrap-b", 2);
                other.breakLock("wrap-b", null, fixture.queue("wrap-b").get(1).ticket());
            });
            assertThatThrownBy(() -> locks.execute(LockRequest.of("wrap-a"), outer -> locks.acquireAsync(
                    LockRequest.builder("wrap-b").wait(Duration.ofSeconds(30)).build()).join()))
                    .isInstanceOfSatisfying(LockLostException.class, lost -> {
                        assertThat(lost.wasGranted()).as("execute's work ran").isTrue();
                        assertThat(lost).cause().isInstanceOf(CompletionException.class)
                                .cause().isInstanceOf(LockLostException.class);
                    });
            breaker.join();
        }
    }

    /**
     * What the work threw itself stays as it was, also a checked exception that has a loss as its cause (the
     * application chose to translate it); only wrappers on the way out (a join()'s) are looked through, and a cycle
     * of causes ends the look without a loop.
     */
    @Test
    void anExceptionOfTheWorksOwnReachesTheCallerAsItIsAndACycleOfCausesEnds() {
        LockTemplate locks = fixture.template();
        IOException translated = new IOException("translated by the application",
                LockLostException.beforeGrant("a nested lock lost its place"));
        assertThatThrownBy(() -> locks.<Void, IOException>execute(LockRequest.of("own-1"), lock -> {
            throw translated;
        })).isSameAs(translated);
        RuntimeException first = new RuntimeException("first");
        RuntimeException second = new RuntimeException("second", first);
        first.initCause(second);
        assertTimeoutPreemptively(Duration.ofSeconds(10), () -> assertThatThrownBy(() ->
                locks.execute(LockRequest.of("own-2"), lock -> {
                    throw first;
                })).isSameAs(first));
        assertThat(locks.tryAcquire("own-2")).as("released").hasValueSatisfying(LockHandle::release);
    }

    /** A lock of several entities joins the scope's part, which is broken while another part is waited for. */
    @Test
    void aLockOfSeveralWhosePartJoinedFromTheScopeIsLostSaysGranted() throws Exception {
        LockTemplate locks = fixture.template();
        LockTemplate other = fixture.template();
        AtomicReference<LockLostException> several = new AtomicReference<>();
        try (LockHandle holder = other.acquire("multi-b", Duration.ZERO)) {
            CompletableFuture<Void> breaker = CompletableFuture.runAsync(() -> {
                awaitQueueLength("multi-b", 2);
                locks.breakLock("multi-a", null, fixture.queue("multi-a").get(0).ticket()); // the outer hold
                holder.release();
            });
            assertThatThrownBy(() -> locks.execute(LockRequest.of("multi-a"), outer -> {
                try {
                    return locks.execute(LockRequest.builder(List.of("multi-a", "multi-b"))
                            .wait(Duration.ofSeconds(30)).build(), inner -> "never runs");
                }
                catch (LockLostException lost) {
                    several.set(lost);
                    throw lost;
                }
            })).isInstanceOf(LockLostException.class);
            breaker.join();
        }
        assertThat(several.get().wasGranted()).as("the part joined was the scope's hold, whose work ran").isTrue();
        assertThat(several.get()).hasMessageContaining("the enclosing scope held multi-a and its work ran");
        assertThat(fixture.queue("multi-b")).isEmpty();
    }

    private void awaitQueueLength(String entity, int length) {
        try {
            fixture.awaitQueueLength(entity, length);
        }
        catch (InterruptedException ex) {
            throw new IllegalStateException(ex);
        }
    }

    @Test
    void breakingAFailClosedWaiterEndsItsWait() throws Exception {
        LockTemplate locks = fixture.template();
        LockTemplate other = fixture.template();
        try (LockHandle holder = locks.acquire("waiting", Duration.ZERO)) {
            CompletableFuture<LockHandle> waiter = CompletableFuture.supplyAsync(() -> other.acquire(
                    LockRequest.builder("waiting").wait(Duration.ofSeconds(30)).failClosed(true).build()));
            fixture.awaitQueueLength("waiting", 2);
            long ticket = fixture.queue("waiting").get(1).ticket();
            assertThat(locks.breakLock("waiting", null, ticket).entry().failClosed()).isTrue();
            assertThatThrownBy(() -> waiter.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(LockLostException.class)
                    .hasMessageContaining("broken by an operator")
                    .cause().satisfies(lost -> assertThat(((LockLostException) lost).wasGranted())
                            .as("granted: the work the wait was for may have run").isFalse());
            assertThat(holder.isValid()).isTrue();
        }
        assertThat(fixture.queue("waiting")).isEmpty();
    }

    /**
     * A fail-closed waiter that died before its turn never held: the waiter behind it removes it once its lease
     * has run out, while the live holder ahead still keeps it out, and takes the lock after that holder.
     */
    @Test
    void aFailClosedWaiterThatDiedBeforeItsTurnIsRemovedByTheWaiterBehindIt() throws Exception {
        LockTemplate locks = fixture.template();
        Steps behindSteps = new Steps();
        LockTemplate behind = fixture.template(b -> { }, behindSteps);
        LockHandle holder = locks.acquire("died-waiting", Duration.ZERO);
        QueueSnapshot.Entry dead = deadFailClosedWaiterBehind("died-waiting", holder);
        CompletableFuture<LockHandle> next = CompletableFuture.supplyAsync(
                () -> behind.acquire("died-waiting", Duration.ofSeconds(20)));

        Await.until(Duration.ofSeconds(10), "the dead waiter's entry to be removed", () -> fixture.queue("died-waiting")
                .stream().noneMatch(e -> e.entryId().equals(dead.entryId())));
        assertThat(holder.isValid()).as("removed while the holder ahead of it still held").isTrue();
        assertThat(next).isNotDone();
        assertThat(behindSteps.count(ProtocolStep.PURGE)).isPositive();
        holder.release();
        try (LockHandle taken = next.get(10, TimeUnit.SECONDS)) {
            assertThat(taken.fencingToken()).isGreaterThan(dead.ticket());
        }
        assertThat(fixture.queue("died-waiting")).isEmpty();
    }

    /**
     * The holder ahead leaves between the read that showed the dead fail-closed waiter kept out and the removal:
     * the waiter was let in at that release and may have held, as far as anyone can tell, so it stays until broken.
     */
    @Test
    void aFailClosedWaiterLetInBeforeTheRemovalLandsStaysUntilBroken() throws Exception {
        LockTemplate locks = fixture.template();
        LockHandle holder = locks.acquire("let-in", Duration.ZERO);
        QueueSnapshot.Entry dead = deadFailClosedWaiterBehind("let-in", holder);
        Steps behindSteps = new Steps();
        ExecutionInterceptor releaseFirst = new ExecutionInterceptor() {
            @Override
            public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
                if (attributes.getAttribute(ProtocolStep.ATTRIBUTE) == ProtocolStep.PURGE && holder.isValid()) {
                    holder.release();
                }
            }
        };
        LockTemplate behind = fixture.template(b -> { }, releaseFirst, behindSteps);

        assertThatThrownBy(() -> behind.acquire("let-in", Duration.ofSeconds(3)))
                .isInstanceOf(LockWaitTimeoutException.class);
        assertThat(behindSteps.count(ProtocolStep.PURGE)).as("the removal was tried").isPositive();
        assertThat(fixture.queue("let-in")).extracting(QueueSnapshot.Entry::entryId).containsExactly(dead.entryId());
        assertThat(locks.breakLock("let-in", null, dead.ticket()).entry().failClosed()).isTrue();
        assertThat(fixture.queue("let-in")).isEmpty();
    }
}
