package io.dynamolock.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockMode;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.QueueSnapshot;
import io.dynamolock.core.WakeUpOptions;
import io.dynamolock.core.test.Await;
import io.dynamolock.core.test.DynamoDbLocal;
import io.dynamolock.core.test.LockFixture;
import io.dynamolock.core.test.FaultInjector;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;

/**
 * Wake-up hints through real templates on DynamoDB Local, each template with its own client and UDP endpoint on
 * loopback (as processes would have): what a genuine hint saves, and that forged, stale, replayed and misrouted
 * ones never grant out of order or twice. Leases of 30 s and polls of 5 s, so that within a test nothing but a
 * hint can hand the lock over quickly: a waiter's reads are counted, not timed.
 */
class WakeUpTemplateTests {

    private static final String SECRET = "0123456789abcdef0123456789abcdef";
    private static final Duration LONG = Duration.ofSeconds(30);

    private final LockFixture fixture = new LockFixture();
    private final String entity = "order-" + System.nanoTime();

    @AfterEach
    void close() throws Exception {
        fixture.close();
    }

    /** Counts the GetItems (polls) a client sends. */
    static final class Reads implements ExecutionInterceptor {
        final AtomicInteger count = new AtomicInteger();

        @Override
        public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
            if (context.request() instanceof GetItemRequest) {
                count.incrementAndGet();
            }
        }
    }

    private LockTemplate template(Consumer<WakeUpOptions.Builder> wakeUp, ExecutionInterceptor... interceptors) {
        WakeUpOptions.Builder options = WakeUpOptions.builder().bindAddress("127.0.0.1");
        wakeUp.accept(options);
        return fixture.template(b -> b.leaseDuration(LONG).heartbeatInterval(Duration.ofSeconds(10))
                .pollInterval(Duration.ofSeconds(5), Duration.ofSeconds(5)).wakeUp(options.build()), interceptors);
    }

    private CompletableFuture<LockHandle> waitFor(LockTemplate template, int queueLength) throws Exception {
        CompletableFuture<LockHandle> waiting = template.acquireAsync(LockRequest.builder(entity).wait(LONG).build());
        fixture.awaitQueueLength(entity, queueLength);
        return waiting;
    }

    /** A port nothing listens on: hints sent to it are lost. */
    private static int closedPort() throws IOException {
        try (DatagramChannel gone = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            return ((InetSocketAddress) gone.getLocalAddress()).getPort();
        }
    }

    /** A template whose entries advertise a port nothing listens on: it sends hints, but hears none. */
    private LockTemplate deaf(Duration heartbeat, ExecutionInterceptor... interceptors) throws IOException {
        WakeUpOptions wakeUp = WakeUpOptions.builder().bindAddress("127.0.0.1")
                .advertisedAddress("127.0.0.1:" + closedPort()).secret(SECRET).build();
        return fixture.template(b -> b.leaseDuration(LONG).heartbeatInterval(heartbeat)
                .pollInterval(Duration.ofSeconds(5), Duration.ofSeconds(5)).wakeUp(wakeUp), interceptors);
    }

    /**
     * Once {@code template} has received {@code datagrams}, waits until it has handled them: its one receiver
     * thread takes datagrams in turn, so once garbage sent after them is rejected, they have been delivered.
     */
    private static void handled(LockTemplate template, long datagrams) throws IOException {
        Await.until(Duration.ofSeconds(10), datagrams + " datagrams received",
                () -> template.wakeUpStats().received() == datagrams);
        long rejected = template.wakeUpStats().rejected();
        try (DatagramChannel marker = DatagramChannel.open()) {
            marker.send(ByteBuffer.wrap("marker".getBytes(StandardCharsets.UTF_8)),
                    HintEndpoint.socketAddress(template.wakeUpAddress()));
        }
        Await.until(Duration.ofSeconds(10), "the marker rejected", () -> template.wakeUpStats().rejected() > rejected);
    }

    /** The release's hint carries the item as the release returned it (the holder never heard of the waiter). */
    @Test
    void anAuthenticatedHintHandsTheLockOverWithoutARead() throws Exception {
        LockTemplate holder = deaf(Duration.ofSeconds(10));
        Reads reads = new Reads();
        LockTemplate waiter = template(o -> o.secret(SECRET), reads);
        LockHandle held = holder.acquire(entity, Duration.ZERO);
        CompletableFuture<LockHandle> waiting = waitFor(waiter, 2);

        held.release();
        LockHandle granted = waiting.get(30, TimeUnit.SECONDS);
        assertThat(reads.count.get()).as("the hint's item was the read").isZero();
        assertThat(granted.fencingToken()).isGreaterThan(held.fencingToken());
        assertThat(holder.wakeUpStats().sent()).as("the release's hint, no hand-over").isEqualTo(1);
        assertThat(waiter.wakeUpStats().useful()).isEqualTo(1);
        granted.release();
    }

    /**
     * The hand-over: a holder that knows the waiter behind it (here from the hint that granted it) lets it in
     * before its own release lands. Every attempt of the release fails before it reaches DynamoDB, so the item
     * still shows the holder, and yet the waiter holds, with a higher fencing token, without a read.
     */
    @Test
    void aHolderHandsTheLockToTheWaiterBehindItBeforeItsReleaseLands() throws Exception {
        FaultInjector faults = new FaultInjector();
        LockTemplate holder = template(o -> o.secret(SECRET), faults);
        Reads reads = new Reads();
        LockTemplate waiter = template(o -> o.secret(SECRET), reads);
        Queued queued = heldWithWaitersBehind(holder, () -> waiter.acquireAsync(request()));

        LockHandle granted = grantedWhileTheReleaseFails(faults, queued.held(), queued.waiting().get(0));
        assertThat(reads.count.get()).as("the hand-over's state was the read").isZero();
        assertThat(waiter.wakeUpStats().useful()).isEqualTo(1);
        granted.release();
        assertThat(fixture.queue(entity)).isEmpty();
    }

    private LockRequest request() {
        return LockRequest.builder(entity).wait(LONG).build();
    }

    private record Queued(LockHandle held, List<CompletableFuture<LockHandle>> waiting) {
    }

    /**
     * {@code holder} takes the lock on the hint of a first holder's release, after each of {@code behind} has
     * queued: the state that grants it shows them behind it.
     */
    @SafeVarargs
    private Queued heldWithWaitersBehind(LockTemplate holder, Callable<CompletableFuture<LockHandle>>... behind)
            throws Exception {
        LockHandle first = template(o -> o.secret(SECRET)).acquire(entity, Duration.ZERO);
        CompletableFuture<LockHandle> holding = waitFor(holder, 2);
        List<CompletableFuture<LockHandle>> waiting = new ArrayList<>();
        for (Callable<CompletableFuture<LockHandle>> waiter : behind) {
            waiting.add(waiter.call());
            fixture.awaitQueueLength(entity, 2 + waiting.size());
        }
        first.release();
        return new Queued(holding.get(30, TimeUnit.SECONDS), waiting);
    }

    /**
     * A long queue's state does not fit a datagram: the hand-over goes out cut after the waiter it lets in (all that
     * decides its grant is ahead of it), which holds on it while the release still cannot land. The holder knows the
     * whole queue from its renewals' answers.
     */
    @Test
    void aLongQueueIsHandedOverCutAfterTheNextInLine() throws Exception {
        FaultInjector faults = new FaultInjector();
        LockTemplate holder = fixture.template(b -> b.leaseDuration(LONG).heartbeatInterval(Duration.ofMillis(100))
                .pollInterval(Duration.ofSeconds(5), Duration.ofSeconds(5))
                .wakeUp(WakeUpOptions.builder().bindAddress("127.0.0.1").secret(SECRET).build()), faults);
        LockTemplate waiter = template(o -> o.secret(SECRET));
        LockHandle held = holder.acquire(entity, Duration.ZERO);
        CompletableFuture<LockHandle> waiting = waitFor(waiter, 2);
        WakeUpOptions wakeUp = WakeUpOptions.builder().bindAddress("127.0.0.1").secret(SECRET).build();
        List<CompletableFuture<LockHandle>> crowd = new ArrayList<>();
        for (char name = 'a'; name < 'g'; name++) { // a hint names each owner once: long and distinct, to fill it
            String owner = String.valueOf(name).repeat(200);
            crowd.add(waitFor(fixture.template(b -> b.ownerName(owner).leaseDuration(LONG)
                    .heartbeatInterval(Duration.ofSeconds(10)).pollInterval(Duration.ofSeconds(5), Duration.ofSeconds(5))
                    .wakeUp(wakeUp)), 3 + crowd.size()));
        }
        HintCodec codec = new HintCodec(SECRET.getBytes(StandardCharsets.UTF_8), Clock.systemUTC(), LONG);
        assertThat(codec.encode(new WakeUpHint(new LockKey(entity, "default"), held.entryId(), System.currentTimeMillis(),
                fixture.item(entity, "default"), true))).as("the whole queue does not fit a datagram").isNull();
        // Renewals of one entry go one after another: once the second after the last enqueue is sent, the answer of
        // the first, which shows the whole queue, has reached the holder.
        FaultInjector.await(faults.awaitAttempts(FaultInjector.Step.RENEW, 2), 10);

        FaultInjector.Rule refused = faults.failAlways(FaultInjector.Step.REMOVE, FaultInjector.Fault.SERVER_ERROR_BEFORE);
        held.release();
        LockHandle granted = waiting.get(30, TimeUnit.SECONDS);
        // The item still shows the holder, so no read could have granted it: only the hand-over.
        assertThat(fixture.queue(entity).get(0).entryId()).as("the release has not landed").isEqualTo(held.entryId());
        assertThat(granted.fencingToken()).isGreaterThan(held.fencingToken());
        faults.remove(refused);
        granted.release();
        for (CompletableFuture<LockHandle> next : crowd) {
            next.get(30, TimeUnit.SECONDS).release();
        }
        Await.until(Duration.ofSeconds(30), "every release landed", () -> fixture.queue(entity).isEmpty());
    }

    /** A waiter in the holder's own JVM is handed the lock too: it is not let in later than one elsewhere. */
    @Test
    void aWaiterInTheHoldersJvmIsHandedTheLockToo() throws Exception {
        FaultInjector faults = new FaultInjector();
        LockTemplate holder = template(o -> o.secret(SECRET), faults);
        Queued queued = heldWithWaitersBehind(holder, () -> holder.acquireAsync(request()));
        Await.until(Duration.ofSeconds(10), "both enqueues' word to the first holder",
                () -> holder.wakeUpStats().sent() == 2);

        grantedWhileTheReleaseFails(faults, queued.held(), queued.waiting().get(0)).release();
        assertThat(holder.wakeUpStats().sent()).as("nothing to its own address").isEqualTo(2);
    }

    /** Releases {@code held} while its removal cannot land; returns what {@code waiting} was granted meanwhile. */
    private LockHandle grantedWhileTheReleaseFails(FaultInjector faults, LockHandle held,
            CompletableFuture<LockHandle> waiting) throws Exception {
        FaultInjector.Rule refused = faults.failAlways(FaultInjector.Step.REMOVE, FaultInjector.Fault.SERVER_ERROR_BEFORE);
        held.release(); // the removal goes on in the background
        LockHandle granted = waiting.get(30, TimeUnit.SECONDS);
        assertThat(fixture.queue(entity)).as("the release has not landed").extracting(QueueSnapshot.Entry::entryId)
                .containsExactly(held.entryId(), granted.entryId());
        assertThat(held.isValid()).isFalse();
        assertThat(granted.isValid()).isTrue();
        assertThat(granted.fencingToken()).isGreaterThan(held.fencingToken());
        faults.remove(refused);
        Await.until(Duration.ofSeconds(30), "the release's retry", () -> fixture.queue(entity).size() == 1);
        assertThat(fixture.queue(entity)).extracting(QueueSnapshot.Entry::entryId).containsExactly(granted.entryId());
        return granted;
    }

    /**
     * A waiter that enqueues after the holder's grant (two processes taking turns: each enqueues while the other
     * holds) is in no state the holder has seen; its enqueue tells the holder of it, so it is handed the lock too.
     */
    @Test
    void aWaiterThatEnqueuesAfterTheGrantTellsTheHolderOfItself() throws Exception {
        FaultInjector faults = new FaultInjector();
        LockTemplate holder = template(o -> o.secret(SECRET), faults);
        Reads reads = new Reads();
        LockTemplate waiter = template(o -> o.secret(SECRET), reads);
        LockHandle held = holder.acquire(entity, Duration.ZERO);
        CompletableFuture<LockHandle> waiting = waitFor(waiter, 2);
        handled(holder, 1);

        LockHandle granted = grantedWhileTheReleaseFails(faults, held, waiting);
        assertThat(reads.count.get()).as("the hand-over's state was the read").isZero();
        assertThat(waiter.wakeUpStats().sent()).as("its enqueue's word to the holder").isEqualTo(1);
        granted.release();
    }

    /**
     * A holder hands over only to waiters it knows of: if the waiter's word is lost (here the holder's advertised
     * port is unreachable), nothing goes out before the release, and the waiter gets the release's own hint.
     */
    @Test
    void aWaiterTheHolderDoesNotKnowWaitsForTheRelease() throws Exception {
        FaultInjector faults = new FaultInjector();
        LockTemplate holder = deaf(Duration.ofSeconds(10), faults);
        LockTemplate waiter = template(o -> o.secret(SECRET));
        LockHandle held = holder.acquire(entity, Duration.ZERO);
        CompletableFuture<LockHandle> waiting = waitFor(waiter, 2);
        Await.until(Duration.ofSeconds(10), "the waiter's word sent", () -> waiter.wakeUpStats().sent() == 1);

        LockHandle granted = grantedOnceTheReleaseLands(holder, faults, held, waiting, "the waiter's word was lost");
        // The release's own hint goes out once its retry is answered; the waiter's poll may have read it first.
        Await.until(Duration.ofSeconds(10), "the release's own hint", () -> holder.wakeUpStats().sent() == 1);
        granted.release();
    }

    /** Releases {@code held} while its removal cannot land, checks that no hand-over went out, then lets it land. */
    private LockHandle grantedOnceTheReleaseLands(LockTemplate holder, FaultInjector faults, LockHandle held,
            CompletableFuture<LockHandle> waiting, String why) throws Exception {
        FaultInjector.Rule refused = faults.failAlways(FaultInjector.Step.REMOVE, FaultInjector.Fault.SERVER_ERROR_BEFORE);
        long sent = holder.wakeUpStats().sent();
        held.release();
        assertThat(holder.wakeUpStats().sent()).as("no hand-over: " + why).isEqualTo(sent);
        assertThat(waiting).isNotDone();
        faults.remove(refused);
        return waiting.get(30, TimeUnit.SECONDS);
    }

    /**
     * Never to a fail-closed waiter: a dead one is removed on the proof that the entries ahead still keep it out,
     * and a holder that handed over would still be in the item keeping nothing out. It gets in once the release
     * has landed.
     */
    @Test
    void aFailClosedWaiterIsLetInOnlyOnceTheReleaseHasLanded() throws Exception {
        FaultInjector faults = new FaultInjector();
        LockTemplate holder = template(o -> o.secret(SECRET), faults);
        LockTemplate waiter = template(o -> o.secret(SECRET));
        Queued queued = heldWithWaitersBehind(holder, () -> waiter.acquireAsync(LockRequest.builder(entity)
                .wait(LONG).failClosed(true).build()));

        LockHandle granted = grantedOnceTheReleaseLands(holder, faults, queued.held(), queued.waiting().get(0),
                "the waiter is fail-closed");
        assertThat(fixture.queue(entity)).extracting(QueueSnapshot.Entry::entryId).containsExactly(granted.entryId());
        granted.release();
    }

    /**
     * A waiter that an operator broke is not handed the lock: the break's answer tells this JVM's holder that it is
     * gone, and the hand-over goes to the entry behind it.
     */
    @Test
    void aWaiterBrokenMeanwhileIsNotHandedTheLock() throws Exception {
        FaultInjector faults = new FaultInjector();
        LockTemplate holder = template(o -> o.secret(SECRET), faults);
        LockTemplate broken = template(o -> o.secret(SECRET));
        LockTemplate last = template(o -> o.secret(SECRET));
        Queued queued = heldWithWaitersBehind(holder, () -> broken.acquireAsync(request()),
                () -> last.acquireAsync(request()));
        CompletableFuture<LockHandle> brokenWaiting = queued.waiting().get(0);
        holder.breakLock(entity, null, fixture.queue(entity).get(1).ticket());

        LockHandle granted = grantedWhileTheReleaseFails(faults, queued.held(), queued.waiting().get(1));
        assertThat(brokenWaiting.isDone() && !brokenWaiting.isCompletedExceptionally())
                .as("the broken waiter was not let in").isFalse();
        granted.release();
        assertThat(brokenWaiting).failsWithin(30, TimeUnit.SECONDS); // it learns it was removed at its next look
    }

    /**
     * What a waiter hears while it waits counts for its own hand-over later: here the break of the entry behind it,
     * answered in its own JVM, which the holder ahead never hears of (its hint port is unreachable, its renewals
     * fail). The holder hands over a state that still shows the broken entry; the next holder hands over without it.
     */
    @Test
    void aBreakHeardWhileWaitingCountsForTheLaterHandOver() throws Exception {
        FaultInjector deafFaults = new FaultInjector();
        LockTemplate deaf = deaf(Duration.ofMillis(100), deafFaults);
        FaultInjector faults = new FaultInjector();
        LockTemplate holder = template(o -> o.secret(SECRET), faults);
        LockTemplate broken = template(o -> o.secret(SECRET));
        LockTemplate last = template(o -> o.secret(SECRET));
        LockHandle first = deaf.acquire(entity, Duration.ZERO);
        CompletableFuture<LockHandle> holding = waitFor(holder, 2);
        CompletableFuture<LockHandle> brokenWaiting = waitFor(broken, 3);
        CompletableFuture<LockHandle> waiting = waitFor(last, 4);
        FaultInjector.await(deafFaults.awaitAttempts(FaultInjector.Step.RENEW, 2), 10); // it knows all three behind it
        deafFaults.failAlways(FaultInjector.Step.RENEW, FaultInjector.Fault.SERVER_ERROR_BEFORE);
        deafFaults.failAlways(FaultInjector.Step.REMOVE, FaultInjector.Fault.SERVER_ERROR_BEFORE);
        holder.breakLock(entity, null, fixture.queue(entity).get(2).ticket());

        first.release(); // never lands; its hand-over still shows the broken entry
        LockHandle held = holding.get(30, TimeUnit.SECONDS);
        FaultInjector.Rule refused = faults.failAlways(FaultInjector.Step.REMOVE, FaultInjector.Fault.SERVER_ERROR_BEFORE);
        held.release();
        LockHandle granted = waiting.get(30, TimeUnit.SECONDS);
        assertThat(brokenWaiting.isDone() && !brokenWaiting.isCompletedExceptionally())
                .as("the broken waiter was not let in").isFalse();
        assertThat(fixture.queue(entity)).as("neither release has landed").hasSize(3);
        assertThat(granted.fencingToken()).isGreaterThan(held.fencingToken());
        deafFaults.clear();
        faults.remove(refused);
        granted.release();
        Await.until(Duration.ofSeconds(30), "every release landed", () -> fixture.queue(entity).isEmpty());
        assertThat(brokenWaiting).failsWithin(30, TimeUnit.SECONDS); // it learns it was removed at its next look
    }

    /**
     * A reader behind a writer, with another reader between them that gave up while the writer (its hint port
     * unreachable, its renewals failing) did not hear of it. The writer's hand-over shows the reader that gave up
     * ahead (1 entry ahead, stamped at the writer's last renewal); the waiter's own state, from the give-up's answer
     * in its JVM, shows the writer ahead (1 entry ahead, stamped later). Both are true; the hand-over lets the
     * reader hold (readers share), so it wins, and the reader does not wait for the release to land.
     */
    @Test
    void aReaderIsHandedTheLockThoughAReaderAheadGaveUpUnbeknownToTheWriter() throws Exception {
        handedToAReaderThoughReadersAheadGaveUpUnbeknownToTheWriter(1);
    }

    /**
     * As above, but two readers ahead gave up unbeknown to the writer. The writer's hand-over shows 2 entries ahead
     * of the waiting reader (both shared: it lets the reader hold); the reader's own state shows 1 (the writer,
     * exclusive: it does not). Both are true: the one that lets the reader hold wins, though it shows more ahead (the
     * other was kept, and the reader waited for the writer's release to land: here its whole lease).
     */
    @Test
    void aReaderIsHandedTheLockThoughTwoReadersAheadGaveUpUnbeknownToTheWriter() throws Exception {
        handedToAReaderThoughReadersAheadGaveUpUnbeknownToTheWriter(2);
    }

    private void handedToAReaderThoughReadersAheadGaveUpUnbeknownToTheWriter(int givingUp) throws Exception {
        FaultInjector faults = new FaultInjector();
        LockTemplate writer = deaf(Duration.ofMillis(100), faults);
        LockTemplate readers = template(o -> o.secret(SECRET));
        LockHandle held = writer.acquire(entity, Duration.ZERO);
        LockRequest read = LockRequest.builder(entity).wait(LONG).mode(LockMode.SHARED).build();
        List<CompletableFuture<LockHandle>> givesUp = new ArrayList<>();
        for (int i = 0; i < givingUp; i++) {
            givesUp.add(readers.acquireAsync(read));
            fixture.awaitQueueLength(entity, 2 + i);
        }
        CompletableFuture<LockHandle> waiting = readers.acquireAsync(read);
        fixture.awaitQueueLength(entity, 2 + givingUp);
        Await.until(Duration.ofSeconds(10), "the enqueues' word sent (lost)",
                () -> readers.wakeUpStats().sent() == givingUp + 1);
        FaultInjector.await(faults.awaitAttempts(FaultInjector.Step.RENEW, 2), 10); // the writer knows every reader
        faults.failAlways(FaultInjector.Step.RENEW, FaultInjector.Fault.SERVER_ERROR_BEFORE);
        FaultInjector.await(faults.awaitAttempts(FaultInjector.Step.RENEW, 1), 10); // no good answer in flight

        for (int i = 0; i < givingUp; i++) {
            givesUp.get(i).cancel(true);
            fixture.awaitQueueLength(entity, 1 + givingUp - i);
        }
        // Each give-up's answer went to this JVM's waiters before its word to the writer (lost) was sent.
        Await.until(Duration.ofSeconds(10), "the give-ups' word",
                () -> readers.wakeUpStats().sent() == 2 * givingUp + 1);
        assertThat(fixture.queue(entity)).extracting(QueueSnapshot.Entry::entryId).hasSize(2);

        faults.failAlways(FaultInjector.Step.REMOVE, FaultInjector.Fault.SERVER_ERROR_BEFORE);
        held.release();
        LockHandle granted;
        try {
            granted = waiting.get(10, TimeUnit.SECONDS);
        }
        finally {
            faults.clear();
        }
        assertThat(granted.fencingToken()).isGreaterThan(held.fencingToken());
        granted.release();
    }

    /**
     * What a holder knows is its states merged: for two of one counter, the merge kept the older one's entries (and
     * their lease ends) under the newer stamp. A holder that held longer than a lease after the last enqueue so
     * handed over a state, stamped fresh, in which every waiter's lease had long ended though each renews: the second
     * waiter (here in the holder's JVM) purged the first, a live entry that had just taken the lock. The purge was
     * refused by its condition, but it is a write (and its answer goes out as hints) per waiter per hand-over.
     */
    @Test
    void aHandOverAfterALongHoldDoesNotMakeWaitersPurgeLiveEntries() throws Exception {
        FaultInjector faults = new FaultInjector();
        LockTemplate template = fixture.template(b -> b.leaseDuration(Duration.ofSeconds(3))
                .heartbeatInterval(Duration.ofSeconds(1)).pollInterval(Duration.ofSeconds(5), Duration.ofSeconds(5))
                .wakeUp(WakeUpOptions.builder().bindAddress("127.0.0.1").secret(SECRET).build()), faults);
        LockHandle held = template.acquire(entity, Duration.ZERO);
        LockRequest request = LockRequest.builder(entity).wait(LONG).build();
        CompletableFuture<LockHandle> first = template.acquireAsync(request);
        fixture.awaitQueueLength(entity, 2);
        CompletableFuture<LockHandle> second = template.acquireAsync(request);
        fixture.awaitQueueLength(entity, 3);
        long lastEnqueueExpiry = fixture.queue(entity).stream()
                .mapToLong(e -> e.leaseExpiresAt().toEpochMilli()).max().orElseThrow();
        // Every entry renews meanwhile; no enqueue comes, so the counter the holder knows stays the same.
        Await.until(Duration.ofSeconds(20), "a lease past the last enqueue",
                () -> System.currentTimeMillis() > lastEnqueueExpiry + 500);
        assertThat(fixture.queue(entity)).as("every entry renewed: none has expired")
                .allMatch(e -> e.leaseExpiresAt().toEpochMilli() > System.currentTimeMillis());
        int purgesBefore = faults.attempts(FaultInjector.Step.PURGE);

        FaultInjector.Rule refused = faults.failAlways(FaultInjector.Step.REMOVE,
                FaultInjector.Fault.SERVER_ERROR_BEFORE);
        held.release(); // handed over; the release itself cannot land
        LockHandle granted = first.get(10, TimeUnit.SECONDS);
        granted.release(); // handed over to the second; its steps run in turn, so a purge on the first state came first
        LockHandle last = second.get(10, TimeUnit.SECONDS);
        faults.remove(refused);
        assertThat(faults.attempts(FaultInjector.Step.PURGE) - purgesBefore)
                .as("purges of a live entry sent on a genuine, fresh hand-over").isZero();
        last.release();
    }

    /**
     * A writer whose renewals fail for a while hands over the readers' lease ends it last learned, which look
     * expired though the readers renew: the second reader, granted beside the first, purged it (refused, a write per
     * reader per hand-over). Nothing is purged on a hint's state now.
     */
    @Test
    void aHandOverToShortLeaseReadersDoesNotMakeThemPurgeEachOther() throws Exception {
        FaultInjector writerFaults = new FaultInjector();
        FaultInjector readerSteps = new FaultInjector();
        LockTemplate writer = fixture.template(b -> b.leaseDuration(Duration.ofSeconds(30))
                .heartbeatInterval(Duration.ofMillis(200)).pollInterval(Duration.ofSeconds(5), Duration.ofSeconds(5))
                .wakeUp(WakeUpOptions.builder().bindAddress("127.0.0.1").secret(SECRET).build()), writerFaults);
        LockTemplate readers = fixture.template(b -> b.leaseDuration(Duration.ofSeconds(3))
                .heartbeatInterval(Duration.ofSeconds(1)).pollInterval(Duration.ofSeconds(5), Duration.ofSeconds(5))
                .wakeUp(WakeUpOptions.builder().bindAddress("127.0.0.1").secret(SECRET).build()), readerSteps);
        LockHandle held = writer.acquire(entity, Duration.ZERO);
        LockRequest read = LockRequest.builder(entity).wait(LONG).mode(LockMode.SHARED).build();
        CompletableFuture<LockHandle> first = readers.acquireAsync(read);
        fixture.awaitQueueLength(entity, 2);
        CompletableFuture<LockHandle> second = readers.acquireAsync(read);
        fixture.awaitQueueLength(entity, 3);
        FaultInjector.await(writerFaults.awaitAttempts(FaultInjector.Step.RENEW, 3), 10); // it knows both readers
        writerFaults.failAlways(FaultInjector.Step.RENEW, FaultInjector.Fault.SERVER_ERROR_BEFORE);
        long agedFrom = System.currentTimeMillis();
        // Its known state ages past the readers' 3 s leases, within the hand-over's 10 s freshness.
        Await.until(Duration.ofSeconds(10), "a reader's lease past what the writer last learned",
                () -> System.currentTimeMillis() > agedFrom + 4_000);
        assertThat(fixture.queue(entity)).as("the readers renew: none expired")
                .allMatch(e -> e.leaseExpiresAt().toEpochMilli() > System.currentTimeMillis());
        int purgesBefore = readerSteps.attempts(FaultInjector.Step.PURGE);

        writerFaults.failAlways(FaultInjector.Step.REMOVE, FaultInjector.Fault.SERVER_ERROR_BEFORE);
        held.release(); // handed over; the release cannot land yet
        LockHandle r1 = first.get(10, TimeUnit.SECONDS);
        LockHandle r2 = second.get(10, TimeUnit.SECONDS);
        r1.release(); // requests of their own: each grant's purge, if any, was sent before them
        r2.release();
        writerFaults.clear();
        assertThat(readerSteps.attempts(FaultInjector.Step.PURGE) - purgesBefore)
                .as("purges of a live reader sent on a genuine hand-over").isZero();
    }

    /**
     * A holder's hand-over to a waiter of its own JVM carries the same lease ends as its hint to other processes:
     * those it last learned, which may look expired though their owners renew. A grant on a hint's state purged
     * nothing beside it; a grant on the same-JVM hand-over's state did, a purge DynamoDB refuses, per grant.
     */
    @Test
    void aHandOverInTheHoldersJvmDoesNotMakeTheWaiterPurgeALiveReaderBesideIt() throws Exception {
        FaultInjector faults = new FaultInjector();
        LockTemplate template = fixture.template(b -> b.leaseDuration(Duration.ofSeconds(30))
                .heartbeatInterval(Duration.ofMillis(200)).pollInterval(Duration.ofSeconds(5), Duration.ofSeconds(5))
                .wakeUp(WakeUpOptions.builder().bindAddress("127.0.0.1").secret(SECRET).build()), faults);
        LockTemplate others = fixture.template(b -> b.leaseDuration(Duration.ofSeconds(3))
                .heartbeatInterval(Duration.ofSeconds(1)).pollInterval(Duration.ofSeconds(5), Duration.ofSeconds(5)));
        LockHandle held = template.acquire(entity, Duration.ZERO);
        LockRequest read = LockRequest.builder(entity).wait(LONG).mode(LockMode.SHARED).build();
        CompletableFuture<LockHandle> elsewhere = others.acquireAsync(read);
        fixture.awaitQueueLength(entity, 2);
        CompletableFuture<LockHandle> reader = template.acquireAsync(read);
        fixture.awaitQueueLength(entity, 3);
        FaultInjector.await(faults.awaitAttempts(FaultInjector.Step.RENEW, 3), 10); // the holder knows both readers
        faults.failAlways(FaultInjector.Step.RENEW, FaultInjector.Fault.SERVER_ERROR_BEFORE);
        long agedFrom = System.currentTimeMillis();
        // What the holder knows ages past the other reader's 3 s lease, within the hand-over's 10 s freshness.
        Await.until(Duration.ofSeconds(10), "the other reader's lease past what the holder last learned",
                () -> System.currentTimeMillis() > agedFrom + 4_000);
        assertThat(fixture.queue(entity)).as("the other reader renews: none expired")
                .allMatch(e -> e.leaseExpiresAt().toEpochMilli() > System.currentTimeMillis());
        int purgesBefore = faults.attempts(FaultInjector.Step.PURGE);

        faults.failAlways(FaultInjector.Step.REMOVE, FaultInjector.Fault.SERVER_ERROR_BEFORE);
        held.release(); // handed over in this JVM; the release cannot land yet
        LockHandle granted = reader.get(10, TimeUnit.SECONDS);
        granted.release(); // a request of its own: the grant's purge, if any, was handed to a thread before it
        faults.clear();
        assertThat(faults.attempts(FaultInjector.Step.PURGE) - purgesBefore)
                .as("purges of a live reader sent on a same-JVM hand-over").isZero();
        elsewhere.get(30, TimeUnit.SECONDS).release();
    }

    /**
     * A renewal's answer tells the holder of the waiters that enqueued after its grant: it hands over to them,
     * though their own word never reached it (its advertised port is unreachable).
     */
    @Test
    void aRenewalTellsTheHolderWhoToHandOverTo() throws Exception {
        FaultInjector faults = new FaultInjector();
        LockTemplate holder = deaf(Duration.ofMillis(100), faults);
        LockTemplate waiter = template(o -> o.secret(SECRET));
        LockHandle held = holder.acquire(entity, Duration.ZERO);
        CompletableFuture<LockHandle> waiting = waitFor(waiter, 2);
        // Renewals of one entry go one after another: once the second after the enqueue is sent, the answer of the
        // first, which shows the waiter, has reached the holder.
        FaultInjector.await(faults.awaitAttempts(FaultInjector.Step.RENEW, 2), 10);

        grantedWhileTheReleaseFails(faults, held, waiting).release();
    }

    @Test
    void aPlainHintMakesTheWaiterReadAtOnce() throws Exception {
        LockTemplate holder = template(o -> { });
        Reads reads = new Reads();
        LockTemplate waiter = template(o -> { }, reads);
        LockHandle held = holder.acquire(entity, Duration.ZERO);
        CompletableFuture<LockHandle> waiting = waitFor(waiter, 2);

        held.release();
        LockHandle granted = waiting.get(30, TimeUnit.SECONDS);
        assertThat(reads.count.get()).as("one read, at the hint, not after the 5 s poll interval").isEqualTo(1);
        assertThat(waiter.wakeUpStats().useful()).isEqualTo(1);
        granted.release();
    }

    @Test
    void forgedStaleReplayedAndMisroutedHintsNeverGrant() throws Exception {
        LockTemplate holder = template(o -> o.secret(SECRET));
        Reads reads = new Reads();
        LockTemplate waiter = template(o -> o.secret(SECRET), reads);
        LockTemplate other = template(o -> o.secret(SECRET));
        LockHandle held = holder.acquire(entity, Duration.ZERO);
        CompletableFuture<LockHandle> waiting = waitFor(waiter, 2);
        LockHandle otherLock = other.acquire(entity + "-other", Duration.ZERO);

        LockKey key = new LockKey(entity, "default");
        String waiterId = fixture.queue(entity).get(1).entryId();
        Map<String, AttributeValue> now = fixture.item(entity, "default");
        Map<String, AttributeValue> waiterFirst = new HashMap<>(now);
        waiterFirst.keySet().removeIf(name -> name.endsWith("#" + held.entryId()));
        long sentAt = System.currentTimeMillis();
        HintCodec genuine = new HintCodec(SECRET.getBytes(StandardCharsets.UTF_8), Clock.systemUTC(),
                Duration.ofSeconds(10));
        HintCodec guessed = new HintCodec("a guessed secret, not theirs".getBytes(StandardCharsets.UTF_8),
                Clock.systemUTC(), Duration.ofSeconds(10));
        HintCodec unsigned = new HintCodec(null, Clock.systemUTC(), Duration.ofSeconds(10));
        List<byte[]> attacks = List.of(
                guessed.encode(new WakeUpHint(key, waiterId, sentAt, waiterFirst)),            // forged: bad HMAC
                unsigned.encode(new WakeUpHint(key, waiterId, sentAt, null)),                  // no HMAC
                genuine.encode(new WakeUpHint(key, waiterId, sentAt - 60_000, waiterFirst)),   // stale
                genuine.encode(new WakeUpHint(key, waiterId, sentAt,                           // another lock's item
                        fixture.item(entity + "-other", "default"))),
                genuine.encode(new WakeUpHint(key, waiterId, sentAt, now)),                    // replayed: holder ahead
                genuine.encode(new WakeUpHint(new LockKey(entity + "-other", "default"), waiterId, sentAt,
                        waiterFirst)),                                                         // another lock's key
                "garbage".getBytes(StandardCharsets.UTF_8),
                new byte[4000],                                                                // oversized
                genuine.encode(new WakeUpHint(key, waiterId, sentAt, null)));                  // the marker
        InetSocketAddress target = HintEndpoint.socketAddress(waiter.wakeUpAddress());
        try (DatagramChannel attacker = DatagramChannel.open()) {
            for (byte[] datagram : attacks) {
                attacker.send(ByteBuffer.wrap(datagram), target);
            }
        }
        // The last, a genuine plain hint, makes the waiter read: its steps run one at a time, so once that read is
        // sent, the states of the hints before it have been weighed, and a granted waiter would never read.
        Await.until(Duration.ofSeconds(10), "the marker's read", () -> reads.count.get() == 1);
        assertThat(waiter.wakeUpStats().received()).isEqualTo(attacks.size());
        assertThat(waiter.wakeUpStats().rejected()).as("bad HMAC, none, stale, garbage, oversized").isEqualTo(5);
        assertThat(waiting).as("no grant while the holder holds").isNotDone();
        assertThat(fixture.queue(entity)).extracting(QueueSnapshot.Entry::entryId)
                .containsExactly(held.entryId(), waiterId);
        assertThat(held.isValid()).isTrue();

        held.release();
        LockHandle granted = waiting.get(30, TimeUnit.SECONDS);
        assertThat(granted.fencingToken()).isGreaterThan(held.fencingToken());
        assertThat(fixture.queue(entity)).extracting(QueueSnapshot.Entry::entryId).containsExactly(waiterId);
        granted.release();
        otherLock.release();
    }

    private static void send(LockTemplate template, byte[] datagram) throws IOException {
        try (DatagramChannel sender = DatagramChannel.open()) {
            sender.send(ByteBuffer.wrap(datagram), HintEndpoint.socketAddress(template.wakeUpAddress()));
        }
    }

    /**
     * While the purge of a dead holder keeps failing (throttled), plain hints, forged or not, still cost one read
     * per poll interval: that read does not end the pause the failure started, so no purge follows it, and the
     * hints after it cost nothing until the scheduled poll.
     */
    @Test
    void plainHintsCostOneReadPerPollIntervalWhilePurgesFail() throws Exception {
        long now = System.currentTimeMillis();
        fixture.admin().putItem(b -> b.tableName(fixture.table()).item(Map.of("pk", AttributeValue.fromS(entity),
                "sk", AttributeValue.fromS("default"), "next", AttributeValue.fromN("11"),
                "t#dead", AttributeValue.fromN("10"), "e#dead", AttributeValue.fromN(Long.toString(now - 1)))));
        FaultInjector faults = new FaultInjector();
        faults.failAlways(FaultInjector.Step.PURGE, FaultInjector.Fault.THROTTLE_BEFORE);
        try (DynamoDbClient client = faults.clientFor(DynamoDbLocal.shared(), 1);
                LockTemplate waiter = LockTemplate.builder(client).tableName(fixture.table()).leaseDuration(LONG)
                        .heartbeatInterval(Duration.ofSeconds(10))
                        .pollInterval(Duration.ofSeconds(3), Duration.ofSeconds(3))
                        .wakeUp(WakeUpOptions.builder().bindAddress("127.0.0.1").build()).build()) {
            CompletableFuture<LockHandle> waiting = waitFor(waiter, 2);
            Await.until(Duration.ofSeconds(10), "the first purge", () -> faults.attempts(FaultInjector.Step.PURGE) == 1);
            String waiterId = fixture.queue(entity).get(1).entryId();
            byte[] plain = new HintCodec(null, Clock.systemUTC(), Duration.ofSeconds(10))
                    .encode(new WakeUpHint(new LockKey(entity, "default"), waiterId, now, null));

            send(waiter, plain);
            Await.until(Duration.ofSeconds(10), "the hint's read", () -> faults.attempts(FaultInjector.Step.READ) == 1);
            for (int i = 0; i < 4; i++) {
                long received = waiter.wakeUpStats().received();
                send(waiter, plain);
                handled(waiter, received + 1);
            }
            Await.until(Duration.ofSeconds(10), "the scheduled poll's purge",
                    () -> faults.attempts(FaultInjector.Step.PURGE) >= 2);
            assertThat(faults.attempts(FaultInjector.Step.PURGE)).as("the first purge and the scheduled poll's")
                    .isEqualTo(2);
            assertThat(faults.attempts(FaultInjector.Step.READ)).as("the first hint's read and the scheduled poll")
                    .isEqualTo(2);
            assertThat(waiting).isNotDone();
        }
    }

    /**
     * A genuine datagram whose item has aged (sent again, or late: here the holder's lease in it has ended, though
     * the holder renews): the waiter acts on it once, and its copies are no news once the waiter knows better.
     */
    @Test
    void aReplayedAuthenticatedHintCostsAtMostOnePurge() throws Exception {
        LockTemplate holder = template(o -> o.secret(SECRET));
        FaultInjector requests = new FaultInjector();
        LockTemplate waiter = template(o -> o.secret(SECRET), requests);
        LockHandle held = holder.acquire(entity, Duration.ZERO);
        CompletableFuture<LockHandle> waiting = waitFor(waiter, 2);
        handled(holder, 1); // the waiter's word: the holder will hand over to it
        String waiterId = fixture.queue(entity).get(1).entryId();
        Map<String, AttributeValue> aged = new HashMap<>(fixture.item(entity, "default"));
        aged.put("e#" + held.entryId(), AttributeValue.fromN(Long.toString(System.currentTimeMillis() - 1)));
        byte[] copy = new HintCodec(SECRET.getBytes(StandardCharsets.UTF_8), Clock.systemUTC(), Duration.ofSeconds(10))
                .encode(new WakeUpHint(new LockKey(entity, "default"), waiterId, System.currentTimeMillis(), aged));

        for (int i = 0; i < 6; i++) {
            long received = waiter.wakeUpStats().received();
            send(waiter, copy);
            handled(waiter, received + 1);
        }
        held.release();
        LockHandle granted = waiting.get(30, TimeUnit.SECONDS); // its step comes after those of the copies
        assertThat(requests.attempts(FaultInjector.Step.PURGE)).as("purges for 6 copies of one datagram")
                .isLessThanOrEqualTo(1);
        assertThat(fixture.queue(entity)).extracting(QueueSnapshot.Entry::entryId).containsExactly(waiterId);
        granted.release();
    }

    @Test
    void aProcessWhoseHintPortIsUnreachableStillGetsTheLockByPolling() throws Exception {
        LockTemplate holder = template(o -> o.secret(SECRET));
        WakeUpOptions unreachable = WakeUpOptions.builder().bindAddress("127.0.0.1")
                .advertisedAddress("127.0.0.1:" + closedPort()).secret(SECRET).build();
        LockTemplate waiter = fixture.template(b -> b.wakeUp(unreachable));
        LockHandle held = holder.acquire(entity, Duration.ZERO);
        CompletableFuture<LockHandle> waiting = waitFor(waiter, 2);
        handled(holder, 1); // the waiter's word: the holder hands over to it

        held.release();
        LockHandle granted = waiting.get(30, TimeUnit.SECONDS);
        assertThat(granted.fencingToken()).isGreaterThan(held.fencingToken());
        // The release's hint is sent once its answer is in, so on a loaded machine it may be counted after the grant.
        Await.until(Duration.ofSeconds(10), "the hand-over and the release's hint, to the unreachable port",
                () -> holder.wakeUpStats().sent() == 2);
        assertThat(waiter.wakeUpStats().received()).isZero();
        granted.release();
    }
}
