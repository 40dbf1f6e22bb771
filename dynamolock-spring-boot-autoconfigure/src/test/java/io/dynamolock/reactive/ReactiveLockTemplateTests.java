package io.dynamolock.reactive;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockLostException;
import io.dynamolock.core.LockMode;
import io.dynamolock.core.LockOperations;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockScope;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.test.Await;
import io.dynamolock.core.test.DynamoDbLocal;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/** {@link ReactiveLockTemplate} at the edges of a grant: what a cancellation there leaves in the queue. */
class ReactiveLockTemplateTests {

    private static final DynamoDbLocal LOCAL = DynamoDbLocal.shared();

    private static final String TABLE = LOCAL.newLockTable();

    private final DynamoDbClient client = LOCAL.client();

    private final LockTemplate locks = LockTemplate.builder(client).tableName(TABLE)
            .leaseDuration(Duration.ofSeconds(2)).heartbeatInterval(Duration.ofMillis(500)).build();

    private final String entity = "reactive-" + UUID.randomUUID();

    @AfterEach
    void close() {
        locks.close();
        client.close();
    }

    /** No heartbeat during the body: the loss is found by the release, and fails the call all the same. */
    @Test
    void aLossFoundByTheReleaseFailsTheCall() {
        LockTemplate slowHeartbeats = slowHeartbeats();
        try {
            Mono<String> call = new ReactiveLockTemplate(slowHeartbeats).execute(LockRequest.of(entity),
                    lock -> Mono.fromCallable(() -> {
                        locks.breakLock(entity, null, lock.fencingToken()); // another template: nothing tells ours
                        return "done";
                    }));
            assertThat(call.materialize().block(Duration.ofSeconds(30)).getThrowable())
                    .isInstanceOf(LockLostException.class).hasMessageContaining(entity);
            assertThat(locks.queue(entity, null).entries()).isEmpty();
        }
        finally {
            slowHeartbeats.close();
        }
    }

    /**
     * The body fails after its lock was broken, and no heartbeat told ours: the loss the release finds is added to the
     * body's error as suppressed, once, as {@code LockTemplate.execute} adds it to its callback's exception.
     */
    @Test
    void aLossFoundByTheReleaseOfAFailedBodyIsAddedToItsError() {
        Throwable failure = failingAfterAnUnheardBreak(new IllegalStateException("body failed"));
        assertThat(failure).isInstanceOf(IllegalStateException.class).hasMessage("body failed");
        assertThat(failure.getSuppressed()).singleElement().isInstanceOfSatisfying(LockLostException.class,
                lost -> assertThat(lost).hasMessageContaining(entity).hasMessageContaining("its reactive body"));
        assertThat(locks.queue(entity, null).entries()).isEmpty();
    }

    /** A body's error that carries a loss already (a nested call joined the lock and reported it) gets no second. */
    @Test
    void aFailedBodysErrorThatCarriesALossAlreadyGetsNoSecond() {
        IllegalStateException carrying = new IllegalStateException("body failed");
        carrying.addSuppressed(new LockLostException("reported by a nested call"));
        assertThat(failingAfterAnUnheardBreak(carrying).getSuppressed()).hasSize(1);
    }

    /** A body that ends in a cancellation (a coroutine's, as its caller gave up) is not made to carry the loss. */
    @Test
    void aBodyEndingInACancellationIsNotGivenTheLoss() {
        assertThat(failingAfterAnUnheardBreak(new CancellationException("caller gone")).getSuppressed()).isEmpty();
    }

    /** A body cancelled by the loss of its lease fails with that loss, which is not added to itself as well. */
    @Test
    void aLossThatEndedTheBodyIsNotAddedToItself() throws Exception {
        LockTemplate other = LockTemplate.builder(client).tableName(TABLE).build();
        try {
            CompletableFuture<Throwable> failure = new ReactiveLockTemplate(locks).execute(LockRequest.of(entity),
                    lock -> Mono.never()).then(Mono.<Throwable>empty()).onErrorResume(Mono::just).toFuture();
            Await.until(Duration.ofSeconds(10), "the grant", () -> locks.queue(entity, null).entries().size() == 1);
            other.breakLock(entity, null, other.queue(entity, null).entries().get(0).ticket());
            assertThat(failure.get(10, TimeUnit.SECONDS)).isInstanceOfSatisfying(LockLostException.class,
                    lost -> assertThat(lost.getSuppressed()).isEmpty());
        }
        finally {
            other.close();
        }
    }

    /**
     * A call's completion was signalled inside the removal lane's slot of its release, so a subscriber's
     * slow downstream code held the lock's lane: 16 of them kept every other removal of the lock unsent.
     */
    @Test
    void slowSubscribersOfFinishedCallsDoNotHoldTheLocksRemovalLane() throws Exception {
        ReactiveLockTemplate reactive = new ReactiveLockTemplate(locks);
        LockRequest shared = LockRequest.builder(entity).mode(LockMode.SHARED).build();
        CountDownLatch downstreamGoesOn = new CountDownLatch(1);
        AtomicInteger inDownstream = new AtomicInteger();
        try {
            for (int i = 0; i < 16; i++) {
                // e.g. a WebFlux handler whose pipeline goes on after the locked call (a slow step, a blocking call)
                reactive.execute(shared, lock -> Mono.just("done"))
                        .doOnSuccess(v -> {
                            inDownstream.incrementAndGet();
                            awaitQuietly(downstreamGoesOn);
                        })
                        .subscribe();
            }
            Await.until(Duration.ofSeconds(20), "16 subscribers in their downstream code", () -> inDownstream.get() == 16);

            CompletableFuture<String> seventeenth = reactive.execute(shared, lock -> Mono.just("17")).toFuture();
            assertThat(seventeenth.get(10, TimeUnit.SECONDS)).as("a 17th call whose body ended at once completes")
                    .isEqualTo("17");
            assertThat(locks.queue(entity, null).entries()).as("every call's removal landed").isEmpty();
        }
        finally {
            downstreamGoesOn.countDown();
        }
    }

    /**
     * A minimum hold's release was handed to the template's timer on boundedElastic, so the application's
     * blocking work filling it kept the lock held, and renewed, past its minimum hold.
     */
    @Test
    void aMinimumHoldEndsOnTimeThoughTheApplicationsBlockingWorkFillsBoundedElastic() throws Exception {
        ReactiveLockTemplate reactive = new ReactiveLockTemplate(locks);
        CountDownLatch free = new CountDownLatch(1);
        try {
            fillBoundedElastic(free);
            String value = reactive.executeMany(LockRequest.of(entity), Duration.ofSeconds(1),
                    lock -> Mono.just("done")).blockLast(Duration.ofSeconds(10));
            assertThat(value).isEqualTo("done");
            Await.until(Duration.ofSeconds(10), "the release 1 s after the grant",
                    () -> locks.queue(entity, null).entries().isEmpty());
        }
        finally {
            free.countDown();
        }
    }

    /**
     * A body failing with the loss of a nested lock B was taken to carry its own lock A's loss already,
     * so A's loss, found by its release, was dropped; {@code LockTemplate.execute} adds it.
     */
    @Test
    void theLossOfTheOuterLockIsAddedToTheLossOfANestedOne() {
        String outer = entity + "-a";
        String inner = entity + "-b";
        LockTemplate slowHeartbeats = slowHeartbeats();
        try {
            ReactiveLockTemplate reactive = new ReactiveLockTemplate(slowHeartbeats);
            Throwable failure = reactive.execute(LockRequest.of(outer), a -> Mono.defer(() -> {
                locks.breakLock(outer, null, a.fencingToken()); // another template: nothing tells ours
                return reactive.execute(LockRequest.of(inner), b -> Mono.fromCallable(() -> {
                    locks.breakLock(inner, null, b.fencingToken());
                    return "done";
                }));
            })).materialize().block(Duration.ofSeconds(30)).getThrowable();
            assertThat(failure).isInstanceOf(LockLostException.class).hasMessageContaining(inner);
            assertThat(failure.getSuppressed()).as("A's loss added to B's, as execute adds it").singleElement()
                    .isInstanceOfSatisfying(LockLostException.class, lost -> assertThat(lost).hasMessageContaining(outer));
        }
        finally {
            slowHeartbeats.close();
        }
    }

    /** What a body fails with, given it fails with {@code error} just after another template broke its lock. */
    private Throwable failingAfterAnUnheardBreak(Throwable error) {
        LockTemplate slowHeartbeats = slowHeartbeats();
        try {
            return new ReactiveLockTemplate(slowHeartbeats).execute(LockRequest.of(entity),
                    lock -> Mono.defer(() -> {
                        locks.breakLock(entity, null, lock.fencingToken()); // another template: nothing tells ours
                        return Mono.error(error);
                    })).materialize().block(Duration.ofSeconds(30)).getThrowable();
        }
        finally {
            slowHeartbeats.close();
        }
    }

    /** A template whose lease outlives the test, so no heartbeat of it hears of a break before the release. */
    private LockTemplate slowHeartbeats() {
        return LockTemplate.builder(client).tableName(TABLE).leaseDuration(Duration.ofSeconds(60))
                .heartbeatInterval(Duration.ofSeconds(30)).build();
    }

    /**
     * Lost-lease callbacks of other locks that block (every thread the template gives callbacks is taken) do not
     * delay the cancellation of a body whose lease is lost: it is the library's own reaction, not one callback
     * queued behind theirs.
     */
    @Test
    void blockingCallbacksOfOtherLocksDoNotDelayTheCancellationOfALostBody() throws Exception {
        LockTemplate other = LockTemplate.builder(client).tableName(TABLE).build();
        CountDownLatch free = new CountDownLatch(1);
        CountDownLatch cancelled = new CountDownLatch(1);
        try {
            int blocked = 8; // more than the template's callback threads
            CountDownLatch blocking = new CountDownLatch(4);
            for (int i = 0; i < blocked; i++) {
                String stuck = entity + "-stuck-" + i;
                LockHandle lock = locks.acquire(stuck, Duration.ZERO);
                lock.onLost(lost -> {
                    blocking.countDown();
                    awaitQuietly(free);
                });
                other.breakLock(stuck, null, lock.fencingToken());
            }
            assertThat(blocking.await(10, TimeUnit.SECONDS)).as("the callback threads are all blocked").isTrue();
            CompletableFuture<Throwable> failure = new ReactiveLockTemplate(locks).execute(LockRequest.of(entity),
                    lock -> Mono.never().doOnCancel(cancelled::countDown)).then(Mono.<Throwable>empty())
                    .onErrorResume(Mono::just).toFuture();
            Await.until(Duration.ofSeconds(10), "the grant", () -> locks.queue(entity, null).entries().size() == 1);
            other.breakLock(entity, null, other.queue(entity, null).entries().get(0).ticket());
            assertThat(cancelled.await(10, TimeUnit.SECONDS)).as("the lost body is cancelled").isTrue();
            assertThat(failure.get(10, TimeUnit.SECONDS)).isInstanceOf(LockLostException.class);
        }
        finally {
            free.countDown();
            other.close();
        }
    }

    /**
     * The application's own blocking work (JDBC behind subscribeOn(boundedElastic()), the usual WebFlux shape) that
     * takes every thread of Reactor's shared boundedElastic scheduler does not keep a finished body's lock held: the
     * release goes on the template's own threads.
     */
    @Test
    void aFinishedBodyReleasesItsLockThoughTheApplicationsBlockingWorkFillsBoundedElastic() throws Exception {
        ReactiveLockTemplate reactive = new ReactiveLockTemplate(locks);
        CountDownLatch free = new CountDownLatch(1);
        try {
            fillBoundedElastic(free);
            CompletableFuture<String> call = reactive.execute(LockRequest.of(entity), lock -> Mono.just("done"))
                    .toFuture();
            assertThat(call.get(10, TimeUnit.SECONDS)).as("completed once released").isEqualTo("done");
            assertThat(locks.queue(entity, null).entries()).isEmpty();
        }
        finally {
            free.countDown();
        }
    }

    /** A body done with its lock may release it early, as {@code execute}'s callback may: that is no loss. */
    @Test
    void aBodyThatReleasesItsLockEarlyCompletesWithItsValue() {
        Mono<String> call = new ReactiveLockTemplate(locks).execute(LockRequest.of(entity),
                lock -> Mono.fromCallable(() -> {
                    lock.release();
                    return "done";
                }));
        assertThat(call.block(Duration.ofSeconds(30))).isEqualTo("done");
        assertThat(locks.queue(entity, null).entries()).isEmpty();
    }

    /**
     * A lock the body waits for loses its place (broken while waiting): never granted itself, but the body ran, so the
     * subscriber is told the loss was granted, with the nested one as its cause.
     */
    @Test
    void aLossEscapingTheBodyIsGrantedToTheSubscriber() throws Exception {
        String nested = entity + "-nested";
        LockTemplate other = LockTemplate.builder(client).tableName(TABLE).build();
        AtomicReference<Throwable> inBody = new AtomicReference<>();
        try (LockHandle holder = other.acquire(nested, Duration.ZERO)) {
            Mono<LockHandle> call = new ReactiveLockTemplate(locks).execute(LockRequest.of(entity),
                    lock -> Mono.fromFuture(locks.acquireAsync(LockRequest.builder(nested)
                            .wait(Duration.ofSeconds(30)).build())).doOnError(inBody::set));
            CompletableFuture<Throwable> failure = call.materialize().map(signal -> signal.getThrowable()).toFuture();
            Await.until(Duration.ofSeconds(30), "the body waits for the nested lock",
                    () -> other.queue(nested, null).entries().size() == 2);
            other.breakLock(nested, null, other.queue(nested, null).entries().get(1).ticket());
            assertThat(failure.get(30, TimeUnit.SECONDS)).isInstanceOfSatisfying(LockLostException.class, lost -> {
                assertThat(lost.wasGranted()).as("the body ran").isTrue();
                assertThat(lost).hasCause(inBody.get());
            });
            assertThat(((LockLostException) inBody.get()).wasGranted()).as("the nested wait itself").isFalse();
        }
        finally {
            other.close();
        }
    }

    /**
     * A call cancelled after its lock was granted but before its body was subscribed (every worker of the body's
     * scheduler busy, as under load) releases the lock: nothing may keep it, renewed, with nobody to release it.
     */
    @Test
    void aCallCancelledBetweenTheGrantAndItsBodyReleasesTheLock() throws Exception {
        ReactiveLockTemplate reactive = new ReactiveLockTemplate(grantedBeforeSubscriptionEnds(locks));
        AtomicBoolean ran = new AtomicBoolean();
        CountDownLatch free = new CountDownLatch(1);
        occupyBodyWorkers(free);
        try {
            Disposable call = reactive.execute(LockRequest.of(entity), lock -> Mono.fromRunnable(() -> ran.set(true)))
                    .subscribe(); // granted before this returns: the body waits for a worker
            assertThat(locks.queue(entity, null).entries()).as("granted").hasSize(1);
            call.dispose();
        }
        finally {
            free.countDown();
        }

        Await.until(Duration.ofSeconds(5), "the cancelled call's lock released",
                () -> locks.queue(entity, null).entries().isEmpty());
        assertThat(ran).as("the body never ran").isFalse();
    }

    /**
     * The lease is lost after the grant but before the body was subscribed (every body worker busy):
     * the loss is known when the body's turn comes, so none of its code may run, as none of a Flow's does.
     */
    @Test
    void aBodyWhoseLeaseWasLostBeforeItsSubscriptionIsNotCalled() throws Exception {
        AtomicReference<LockHandle> granted = new AtomicReference<>();
        LockOperations recording = (LockOperations) Proxy.newProxyInstance(LockOperations.class.getClassLoader(),
                new Class<?>[] {LockOperations.class}, (proxy, method, args) -> {
                    try {
                        Object result = method.invoke(locks, args);
                        if (method.getName().equals("acquireAsync")) {
                            ((CompletableFuture<?>) result).thenAccept(lock -> granted.set((LockHandle) lock));
                        }
                        return result;
                    }
                    catch (InvocationTargetException ex) {
                        throw ex.getCause();
                    }
                });
        LockTemplate other = LockTemplate.builder(client).tableName(TABLE).build();
        AtomicBoolean called = new AtomicBoolean();
        CountDownLatch free = new CountDownLatch(1);
        CompletableFuture<Throwable> failure;
        try {
            occupyBodyWorkers(free);
            failure = new ReactiveLockTemplate(recording).execute(LockRequest.of(entity), lock -> {
                called.set(true); // e.g. a @QueueLocked method's assembly-time code
                return Mono.just("done");
            }).materialize().map(signal -> signal.getThrowable() == null ? new AssertionError("completed")
                    : signal.getThrowable()).toFuture();
            Await.until(Duration.ofSeconds(10), "the grant", () -> granted.get() != null);
            CountDownLatch lost = new CountDownLatch(1);
            granted.get().onLost(lock -> lost.countDown());
            other.breakLock(entity, null, other.queue(entity, null).entries().get(0).ticket());
            assertThat(lost.await(10, TimeUnit.SECONDS)).as("the loss is known").isTrue();
        }
        finally {
            free.countDown();
            other.close();
        }
        assertThat(failure.get(10, TimeUnit.SECONDS)).isInstanceOf(LockLostException.class);
        assertThat(called).as("the body's function was called after the loss was known").isFalse();
    }

    /**
     * A lease that ran out on this JVM's clock before the body's turn, in the moment before its timer marks it lost:
     * the handle is no longer valid, not yet lost. The body is not called, and the call fails with the loss; it did
     * not complete as if the body had run.
     */
    @Test
    void aBodyWhoseLeaseRanOutBeforeItsSubscriptionFailsTheCall() {
        LockOperations ranOut = (LockOperations) Proxy.newProxyInstance(LockOperations.class.getClassLoader(),
                new Class<?>[] {LockOperations.class}, (proxy, method, args) -> {
                    try {
                        Object result = method.invoke(locks, args);
                        return method.getName().equals("acquireAsync")
                                ? ((CompletableFuture<?>) result).thenApply(lock -> notValid((LockHandle) lock))
                                : result;
                    }
                    catch (InvocationTargetException ex) {
                        throw ex.getCause();
                    }
                });
        AtomicBoolean called = new AtomicBoolean();
        Throwable failure = new ReactiveLockTemplate(ranOut).execute(LockRequest.of(entity), lock -> {
            called.set(true);
            return Mono.just("done");
        }).materialize().block(Duration.ofSeconds(30)).getThrowable();
        assertThat(failure).isInstanceOf(LockLostException.class).hasMessageContaining(entity);
        assertThat(called).as("the body's function was called").isFalse();
        assertThat(locks.queue(entity, null).entries()).isEmpty();
    }

    /** {@code lock}, reading not valid: its lease ran out on the clock, and its timer has not marked it lost yet. */
    private static LockHandle notValid(LockHandle lock) {
        return (LockHandle) Proxy.newProxyInstance(LockHandle.class.getClassLoader(), new Class<?>[] {LockHandle.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("isValid")) {
                        return false;
                    }
                    try {
                        return method.invoke(lock, args);
                    }
                    catch (InvocationTargetException ex) {
                        throw ex.getCause();
                    }
                });
    }

    /** Blocks every worker of {@link Schedulers#parallel()}, where bodies run, until {@code free}. */
    /** The application's blocking work on every thread of Reactor's shared boundedElastic, until {@code free}. */
    private static void fillBoundedElastic(CountDownLatch free) throws InterruptedException {
        int threads = Schedulers.DEFAULT_BOUNDED_ELASTIC_SIZE;
        CountDownLatch busy = new CountDownLatch(threads);
        for (int i = 0; i < threads; i++) {
            Mono.fromRunnable(() -> {
                busy.countDown();
                awaitQuietly(free);
            }).subscribeOn(Schedulers.boundedElastic()).subscribe();
        }
        assertThat(busy.await(10, TimeUnit.SECONDS)).as("boundedElastic is full").isTrue();
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    private static void occupyBodyWorkers(CountDownLatch free) throws InterruptedException {
        int workers = Schedulers.DEFAULT_POOL_SIZE;
        CountDownLatch busy = new CountDownLatch(workers);
        for (int i = 0; i < workers; i++) {
            Schedulers.parallel().schedule(() -> {
                busy.countDown();
                awaitQuietly(free);
            });
        }
        assertThat(busy.await(10, TimeUnit.SECONDS)).isTrue();
    }

    /**
     * {@code locks}, but an asynchronous acquire waits for its grant and returns it completed: the grant then
     * reaches the reactive pipeline while it is being subscribed, before a cancellation can.
     */
    private static LockOperations grantedBeforeSubscriptionEnds(LockOperations locks) {
        return (LockOperations) Proxy.newProxyInstance(LockOperations.class.getClassLoader(),
                new Class<?>[] {LockOperations.class}, (proxy, method, args) -> {
                    try {
                        Object result = method.invoke(locks, args);
                        if (method.getName().equals("acquireAsync") && args.length == 2
                                && args[1] instanceof LockScope) {
                            return CompletableFuture.completedFuture(((CompletableFuture<?>) result).join());
                        }
                        return result;
                    }
                    catch (InvocationTargetException ex) {
                        throw ex.getCause();
                    }
                });
    }
}
