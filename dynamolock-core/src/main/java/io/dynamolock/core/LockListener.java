package io.dynamolock.core;

import java.time.Duration;

/**
 * Hears what happens to this JVM's locks, for metrics and logs. Called on the
 * thread that caused the event; keep it quick and do not throw.
 */
public interface LockListener {

    /** The lock was granted after waiting {@code waited} (re-entries are not reported). */
    default void onAcquired(LockHandle lock, Duration waited) {
    }

    /** The caller gave up after {@code waited}, or could not get in at once with no wait. */
    default void onNotAcquired(String entity, String namespace, Duration waited) {
    }

    /** The lock was released after being held for {@code held}. */
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
