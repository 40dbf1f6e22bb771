package io.dynamolock.core;

/**
 * The lock's queue holds as many waiters as allowed (or as fit in one DynamoDB
 * item). The caller was not enqueued.
 */
public class LockQueueFullException extends DynamoLockException {

    public LockQueueFullException(String message) {
        super(message);
    }

    public LockQueueFullException(String message, Throwable cause) {
        super(message, cause);
    }
}
