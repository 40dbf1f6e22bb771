package io.dynamolock.reactive;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockLostException;
import io.dynamolock.core.LockOperations;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockScope;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * {@link ReactiveLockOperations} on a {@link LockOperations} (the {@code LockTemplate}), through its
 * {@link LockOperations#acquireAsync(LockRequest, LockScope) acquireAsync}:
 *
 * <ol>
 * <li>On subscription, the scope is read from the subscriber's {@code Context} and the lock asked for with it
 *     (joined at once if the scope holds it), with the {@code Context}'s Micrometer observation (a WebFlux
 *     request's) as the thread's current one if it has none, so that the lock's observations are in its trace.
 *     No thread waits: the future completes on a dynamolock thread.</li>
 * <li>Cancelled while waiting: the future is cancelled, so the entry leaves the queue (a grant racing with the
 *     cancel is released by the core).</li>
 * <li>Granted: the body is subscribed on {@link Schedulers#parallel()} (not on dynamolock's threads) with
 *     {@code scope.with(lock)} in its context.</li>
 * <li>The body completes, errors or is cancelled: the lock is released with {@link LockHandle#releaseAsync()}, on
 *     the template's own threads, as a release is a DynamoDB request and must not block an event loop, nor wait for
 *     a Reactor scheduler the application's blocking work may fill. Completion is signalled after the release;
 *     cancellation does not wait for it.</li>
 * <li>The lease is lost while the body runs: with {@code failOnLostLease}, the body is cancelled and the result
 *     fails with {@link LockLostException} at once (also when the loss is only noticed at completion, or by the
 *     release itself);
 *     otherwise a warning is logged and the body goes on. Either way, a body that fails has the loss added to its
 *     error as suppressed, as {@code LockTemplate.execute} adds it to its callback's exception.</li>
 * </ol>
 *
 * <p>The lock guards the body's signals, not the threads its work started. Cancelled (a client gone, a
 * {@code timeout()} downstream), the body has its lock released at once, while a blocking step it began, such as
 * {@code Mono.fromCallable(jdbcCall).subscribeOn(Schedulers.boundedElastic())}, runs on beside the next holder: no
 * publisher tells when thread work it started has ended, and an interrupt does not stop a JDBC call. Guard such
 * writes with {@link LockHandle#fencingToken()}, or do the step in a Kotlin {@code suspend fun} with
 * {@code withContext(Dispatchers.IO)}, which a cancelled {@code @QueueLocked} call or {@code withLock} waits for.
 */
public class ReactiveLockTemplate implements ReactiveLockOperations {

    private static final Logger log = LoggerFactory.getLogger(ReactiveLockTemplate.class);

    private final LockOperations locks;
    private final boolean failOnLostLease;
    private final Scheduler bodies = Schedulers.parallel();

    /** A template that fails the body with {@link LockLostException} when the lease is lost. */
    public ReactiveLockTemplate(LockOperations locks) {
        this(locks, true);
    }

    /**
     * @param locks           the operations to lock with (the application's {@code LockTemplate})
     * @param failOnLostLease whether a lease lost while the body runs fails it ({@code true}), or is only logged
     */
    public ReactiveLockTemplate(LockOperations locks, boolean failOnLostLease) {
        this.locks = Objects.requireNonNull(locks, "locks must not be null");
        this.failOnLostLease = failOnLostLease;
    }

    @Override
    public <T> Mono<T> execute(LockRequest request, Function<? super LockHandle, ? extends Publisher<T>> body) {
        return executeMany(request, body).singleOrEmpty();
    }

    @Override
    public <T> Flux<T> executeMany(LockRequest request, Function<? super LockHandle, ? extends Publisher<T>> body) {
        return executeMany(request, null, body);
    }

    /**
     * As {@link #executeMany(LockRequest, Function)}, but the lock is held at least {@code minHold} from its grant
     * (what {@code @QueueLocked(minHold = ...)} asks for): a body that ends sooner, however it ends, has its signal
     * passed on at once, and the lock stays held (renewed as usual) until then and is released in the background,
     * on the template's timer: no thread waits. If the template closes first, a fail-closed lock is released then
     * and a fail-open one expires with its lease ({@link LockHandle#releaseAfter}).
     *
     * @param minHold the least time the lock is held from its grant, or {@code null} for none
     */
    public <T> Flux<T> executeMany(LockRequest request, Duration minHold,
            Function<? super LockHandle, ? extends Publisher<T>> body) {
        Objects.requireNonNull(request, "request must not be null");
        Objects.requireNonNull(body, "body must not be null");
        return Flux.deferContextual(context -> {
            LockScope scope = ReactiveLockOperations.scope(context);
            // The grant goes straight to usingWhen, on the thread that completed it: from then on a cancellation
            // releases it. (Moving it to the body's scheduler first would leave a window in which a cancellation
            // drops a granted lock that nobody releases, renewed for ever.) A grant that still arrives after a
            // cancellation is released as it is discarded.
            Mono<Held> acquire = Mono.fromFuture(
                    () -> SubscriberObservation.around(context, () -> locks.acquireAsync(request, scope)), false)
                    .doOnDiscard(LockHandle.class, this::releaseDiscarded)
                    .map(lock -> new Held(lock, System.nanoTime()));
            return Flux.usingWhen(acquire,
                    held -> guarded(held.lock(), body)
                            .subscribeOn(bodies)
                            .contextWrite(inner -> inner.put(LockScope.class, scope.with(held.lock()))),
                    held -> releaseOnComplete(held, minHold),
                    (held, failure) -> release(held, minHold)
                            .then(Mono.fromRunnable(() -> addLoss(held.lock(), failure))),
                    held -> release(held, minHold))
                    .onErrorMap(ReactiveLockTemplate::lossAtCompletion);
        });
    }

    /**
     * usingWhen wraps an error of the completion's cleanup ("Async resource cleanup failed after onComplete"): a
     * loss found there is passed on as the LockLostException it is, as one found while the body ran.
     */
    private static Throwable lossAtCompletion(Throwable ex) {
        return ex.getClass() == RuntimeException.class && ex.getCause() instanceof LockLostException lost ? lost : ex;
    }

    private void releaseDiscarded(LockHandle lock) {
        lock.releaseAsync();
    }

    /** A granted lock and when it was granted (for a minimum hold). */
    private record Held(LockHandle lock, long grantedAt) {
    }

    private <T> Flux<T> guarded(LockHandle lock, Function<? super LockHandle, ? extends Publisher<T>> body) {
        // The body ran: a loss before the grant of a lock it asked for must not reach our subscriber as "not granted".
        Flux<T> flux = Flux.defer(() -> {
            if (failOnLostLease && !lock.isValid()) {
                // Lost (or run out on the clock, not yet marked lost) before the body was subscribed: none of its
                // code runs, and the call fails with the loss here, since the release may not find it.
                return Flux.error(lost(lock));
            }
            Publisher<T> publisher = body.apply(lock);
            return publisher == null ? Flux.empty() : Flux.from(publisher);
        }).onErrorMap(LockLostException::escapingWork);
        // whenLost, not onLost: the cancellation must not wait behind user callbacks of other locks that block.
        Mono<Void> lost = Mono.create(sink -> lock.whenLost().thenRun(sink::success));
        if (failOnLostLease) {
            // takeUntilOther cancels the body only when the other publisher completes: an error of it would leave
            // the body running beside the next holder. So the loss completes it, and the error comes after.
            AtomicBoolean seen = new AtomicBoolean();
            return flux.takeUntilOther(lost.doOnSuccess(ignored -> seen.set(true)))
                    .concatWith(Mono.defer(() -> seen.get() ? Mono.error(lost(lock)) : Mono.empty()));
        }
        lock.onLost(ignored -> log.warn("{} (dynamolock.on-lost-lease=log)", lost(lock).getMessage()));
        return flux;
    }

    /**
     * Releases, then fails the completion if the lease turned out lost meanwhile, or the release found it lost
     * (broken, or purged, before any heartbeat told us). Asked of {@code wasLost()}, as {@code LockTemplate.execute}
     * asks, not of {@code isValid()}, which a body that released early has turned false too.
     */
    private Mono<Void> releaseOnComplete(Held held, Duration minHold) {
        return Mono.defer(() -> {
            LockHandle lock = held.lock();
            Mono<Void> released = release(held, minHold);
            if (!failOnLostLease) {
                return released;
            }
            return released.then(Mono.defer(() -> lock.wasLost() ? Mono.<Void>error(lost(lock)) : Mono.empty()));
        });
    }

    /**
     * Adds a loss, seen while the body ran or found by its release, to the body's error as suppressed, as
     * {@code LockTemplate.execute} adds it to its callback's: the subscriber is told its work was not protected, and
     * keeps the error it is written to handle. Whatever {@code failOnLostLease}: the call fails anyway. Not to a
     * cancellation (the caller gave up, and hears nothing more), nor again to an error that carries this lock's loss
     * already: the loss itself, when it ended the body, or one a nested call that joined the lock added. The loss of
     * another lock (a nested call's, of another entity) does not count: this one is added to it.
     */
    private static void addLoss(LockHandle lock, Throwable failure) {
        if (lock.wasLost() && !(failure instanceof CancellationException) && !carriesTheLossOf(lock, failure)) {
            failure.addSuppressed(lost(lock));
        }
    }

    /**
     * Whether {@code failure}, or an exception it was made from, is or carries the loss of {@code lock} already
     * ({@link LockLostException#isLossOf}). Causes count: a
     * {@code @QueueLocked} suspend function's error may be kotlinx's recovered copy (debug mode, as under {@code -ea})
     * of what it threw, the original as its cause.
     */
    private static boolean carriesTheLossOf(LockHandle lock, Throwable failure) {
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable next = failure; next != null && seen.add(next); next = next.getCause()) {
            if (isLossOf(lock, next) || Arrays.stream(next.getSuppressed()).anyMatch(s -> isLossOf(lock, s))) {
                return true;
            }
        }
        return false;
    }

    private static boolean isLossOf(LockHandle lock, Throwable thrown) {
        return thrown instanceof LockLostException lost && lost.isLossOf(lock);
    }

    /** Releases now, or, within a minimum hold, schedules the release and completes at once. */
    private Mono<Void> release(Held held, Duration minHold) {
        LockHandle lock = held.lock();
        return Mono.defer(() -> {
            long remaining = minHold == null ? 0 : held.grantedAt() + minHold.toNanos() - System.nanoTime();
            if (remaining > 0 && lock.isValid()) {
                // Not part of the subscriber's pipeline: the caller gets its signal now, the lock is kept till then
                // by the template's timer (see LockHandle.releaseAfter for a close meanwhile). Called right here:
                // with a positive delay releaseAfter never blocks, even for a lease lost meanwhile.
                lock.releaseAfter(Duration.ofNanos(remaining));
                return Mono.<Void>empty();
            }
            // On the template's threads, not a Reactor scheduler: the application's blocking work that fills
            // boundedElastic must not keep a finished body's lock held. Not cancelled with the subscriber.
            return Mono.fromFuture(lock::releaseAsync, true);
        });
    }

    private static LockLostException lost(LockHandle lock) {
        return LockLostException.whileRunning(lock, "its reactive body");
    }
}
