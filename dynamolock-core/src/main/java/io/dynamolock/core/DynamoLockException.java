package io.dynamolock.core;

/**
 * Root of every exception dynamolock throws. Messages name the entity, the
 * namespace and the values involved, so a log line alone says what happened.
 */
public class DynamoLockException extends RuntimeException {

    public DynamoLockException(String message) {
        super(message);
    }

    public DynamoLockException(String message, Throwable cause) {
        super(message, cause);
    }
}
