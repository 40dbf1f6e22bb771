package io.dynamolock.core;

/**
 * The waiting thread was interrupted. Its queue entry has been removed and the
 * thread's interrupt status is set again, as {@link InterruptedException}
 * handling expects.
 */
public class LockInterruptedException extends DynamoLockException {

    public LockInterruptedException(String message, InterruptedException cause) {
        super(message, cause);
    }
}
