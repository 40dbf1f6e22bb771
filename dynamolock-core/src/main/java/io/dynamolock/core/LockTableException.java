package io.dynamolock.core;

/**
 * The lock table is missing or not shaped as dynamolock needs it. The message
 * names the table, what is wrong and how to fix it.
 */
public class LockTableException extends DynamoLockException {

    public LockTableException(String message) {
        super(message);
    }

    public LockTableException(String message, Throwable cause) {
        super(message, cause);
    }
}
