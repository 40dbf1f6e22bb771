package io.dynamolock.core;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The lock operations of a {@link LockTemplate}, as an interface to depend on and to stub in tests, as
 * spring-retry's {@code RetryOperations} is to its {@code RetryTemplate}. Re-entry is lexical: inside a callback of
 * {@code execute} or {@code inScope}, requests for the same lock join it; a handle from {@code acquire} belongs to
 * the handle, not to the thread. Code that does not stay on one thread carries its {@link LockScope} itself
 * and passes it to {@link #acquireAsync(LockRequest, LockScope)}.
 */
public interface LockOperations {

    /**
     * Waits up to {@code wait} for the lock on {@code entity} in the default namespace.
     *
     * @throws LockWaitTimeoutException if the wait ran out first
     */
    LockHandle acquire(String entity, Duration wait);

    /**
     * Waits for the lock as {@code request} says.
     *
     * @throws LockWaitTimeoutException  if the wait ran out first (also at once with no wait)
     * @throws LockInterruptedException  if the thread was interrupted while waiting
     * @throws LockQueueFullException    if the queue is at its maximum length
     * @throws LockLostException         if the caller's queue entry expired while it waited
     */
    LockHandle acquire(LockRequest request);

    /**
     * Asks for the lock as {@code request} says without blocking the calling thread, and without holding any
     * thread while it waits: its polls, wake-ups and time-out are scheduled, and its requests run on a small
     * bounded pool. Joins no lock (see {@link #acquireAsync(LockRequest, LockScope)} for re-entry).
     *
     * <p>The future completes with the lock, or exceptionally with what {@link #acquire(LockRequest)} throws
     * ({@link LockWaitTimeoutException}, {@link LockLostException}, {@link LockQueueFullException}, ...); the
     * entry has then left the queue (when DynamoDB is slow to answer the removal, it completes half a second after
     * the wait ended at most, and the entry leaves in the background). It completes on a dynamolock thread: chain work that blocks with an
     * {@code ...Async} stage and an executor of your own. <b>Cancelling it</b> (or completing it any other way,
     * e.g. {@code orTimeout}) abandons the wait: the entry leaves the queue, also when the enqueue was still in
     * flight (once it has answered), and a grant that races with the cancel is released at once, so no entry is
     * left that nobody owns.
     *
     * @throws IllegalArgumentException if the request is invalid (before any request is sent)
     * @throws IllegalStateException    if the template is closed
     */
    CompletableFuture<LockHandle> acquireAsync(LockRequest request);

    /**
     * As {@link #acquireAsync(LockRequest)}, but joins the lock at once if {@code scope} holds it and the request
     * is {@linkplain LockRequest#reentrant() re-entrant} (a hold on the same entry, same fencing token; only the
     * outermost release gives it up). A lock of the scope whose lease was lost fails the future with
     * {@link LockLostException}; one released meanwhile is queued for as anyone would.
     */
    CompletableFuture<LockHandle> acquireAsync(LockRequest request, LockScope scope);

    /**
     * The calling thread's scope: the locks of the {@code execute} and {@code inScope} callbacks it runs inside,
     * for passing to {@link #acquireAsync(LockRequest, LockScope)} from code that leaves the thread.
     */
    LockScope currentScope();

    /**
     * Takes the lock on {@code entity} if it is free (no live entry ahead), without waiting; empty if it is not,
     * a full queue ({@code maxQueueLength}) included.
     */
    Optional<LockHandle> tryAcquire(String entity);

    /**
     * Takes the lock if the live entries ahead let it hold (none for an exclusive lock of one permit; fewer than
     * its permits for a semaphore; only readers for a reader), without waiting; the request's wait is ignored.
     * Empty if they do not, a full queue ({@code maxQueueLength}) included.
     */
    Optional<LockHandle> tryAcquire(LockRequest request);

    /**
     * Runs {@code callback} holding the lock, with the lock in the thread's scope (nested requests for it
     * join), and releases it however the callback ends. If the lease was lost while it ran (purged, broken, not
     * renewed in time; found at the latest by the release), the callback's work was not protected: a callback that
     * returned ends in {@link LockLostException}, one that threw keeps its exception with the loss suppressed. A
     * nested {@code execute} that joined its scope's hold sends no request at its release, so it reports only a loss
     * this process knew of by then; the outermost one's release finds any.
     */
    <T, E extends Throwable> T execute(LockRequest request, LockCallback<T, E> callback) throws E;

    /** Runs {@code callback} holding the lock on {@code entity} and releases it however the callback ends. */
    <T, E extends Throwable> T execute(String entity, Duration wait, LockCallback<T, E> callback) throws E;

    /**
     * Runs {@code callback} with {@code lock}, a handle of these operations, in the calling thread's scope:
     * requests for the same lock made from within join it. Does not release it.
     */
    <T, E extends Throwable> T inScope(LockHandle lock, LockCallback<T, E> callback) throws E;

    /** The locks held or waited for through these operations now. */
    List<LockInfo> activeLocks();

    /** The queue of a lock as stored now; {@code namespace} {@code null} for the default. */
    QueueSnapshot queue(String entity, String namespace);
}
