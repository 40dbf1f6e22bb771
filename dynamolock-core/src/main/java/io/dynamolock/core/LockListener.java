package io.dynamolock.core;

import java.time.Duration;

/**
 * Hears what happens to this JVM's locks, for metrics, traces and logs. Called on the
 * thread that caused the event; keep it quick and do not throw.
 *
 * <p>Every acquisition (re-entries aside) is reported as {@link #onAcquiring} followed by exactly one
 * of {@link #onAcquired}, {@link #onNotAcquired} or {@link #onFailed}; a granted lock then ends with
 * {@link #onReleased} or {@link #onLost}. For a blocking {@code acquire}, {@code tryAcquire} or
 * {@code execute} both are reported on the calling thread. For {@code acquireAsync}, {@code onAcquiring}
 * is reported on the calling thread and the outcome on the dynamolock thread that completes the future
 * (a cancelled one is reported as {@link #onFailed} with the {@code CancellationException}). The start and
 * the outcome carry the same {@link LockAttempt}: pair them by it, not by thread. A request for several
 * entities is reported as one acquisition per entity it queues for.
 */
public interface LockListener {

    /** An acquisition begins, before its first request, on the thread that asked. */
    default void onAcquiring(LockAttempt attempt) {
    }

    /** The lock was granted after waiting {@code waited} (re-entries are not reported). */
    default void onAcquired(LockAttempt attempt, LockHandle lock, Duration waited) {
    }

    /** The caller gave up after {@code waited}, or could not get in at once with no wait. */
    default void onNotAcquired(LockAttempt attempt, Duration waited) {
    }

    /**
     * The acquisition failed other than by its wait running out: its lease was lost while it waited
     * ({@link LockLostException}), it was interrupted ({@link LockInterruptedException}), the queue was
     * full ({@link LockQueueFullException}), the template closed, or a request failed. Its entry has been
     * removed (or, when DynamoDB is slow to answer, is leaving in the background, as {@link LockWaitTimeoutException}
     * says); {@code failure} is what the caller gets thrown.
     */
    default void onFailed(LockAttempt attempt, Duration waited, RuntimeException failure) {
    }

    /**
     * The lock was released after being held for {@code held}. {@code lock} is the handle {@link #onAcquired}
     * reported, even when a re-entry's handle (which joined the lock) was the last to let go of it.
     */
    default void onReleased(LockHandle lock, Duration held) {
    }

    /** The lease was lost while held. */
    default void onLost(LockHandle lock) {
    }

    /** This template broke an entry of a lock's queue ({@link LockTemplate#breakLock}). */
    default void onBroken(BrokenLock broken) {
    }

    /** A break of this template removed nothing: no entry of the lock had {@code ticket}. */
    default void onBreakRefused(String entity, String namespace, long ticket) {
    }
}
