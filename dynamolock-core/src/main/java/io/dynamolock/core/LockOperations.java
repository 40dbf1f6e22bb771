package io.dynamolock.core;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The lock operations of a {@link LockTemplate}, as an interface to depend on and to stub in tests, as
 * spring-retry's {@code RetryOperations} is to its {@code RetryTemplate}. Re-entry is lexical: inside a callback of
 * {@code execute} or {@code inScope}, requests for the same lock join it; a handle from {@code acquire} belongs to
 * the handle, not to the thread.
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

    /** Takes the lock on {@code entity} if no live entry is ahead, without waiting. */
    Optional<LockHandle> tryAcquire(String entity);

    /** Takes the lock if no live entry is ahead, without waiting; the request's wait is ignored. */
    Optional<LockHandle> tryAcquire(LockRequest request);

    /**
     * Runs {@code callback} holding the lock, with the lock in the thread's scope (nested requests for it
     * join), and releases it however the callback ends.
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
