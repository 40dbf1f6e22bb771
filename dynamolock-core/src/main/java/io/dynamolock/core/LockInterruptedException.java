package io.dynamolock.core;

/**
 * The waiting thread was interrupted. Its queue entry has been removed and the
 * thread's interrupt status is set again, as {@link InterruptedException}
 * handling expects. It is thrown half a second after the interrupt at most: when a
 * request in flight (a poll, the removal) is slower, the entry leaves in the
 * background, as after a {@link LockWaitTimeoutException}.
 */
public class LockInterruptedException extends DynamoLockException {

    public LockInterruptedException(String message, InterruptedException cause) {
        super(message, cause);
    }
}
