package io.dynamolock.annotation;

import io.dynamolock.core.DynamoLockException;

/**
 * A {@link QueueLocked} method is declared wrongly: its entity expression does not parse
 * or names an unknown parameter, a duration does not parse, the lease is not longer than
 * the heartbeat interval, or it returns an asynchronous type the lock cannot follow. The
 * message names the class, the method and the bad value. Thrown at startup.
 */
public class QueueLockedConfigurationException extends DynamoLockException {

    public QueueLockedConfigurationException(String message) {
        super(message);
    }

    public QueueLockedConfigurationException(String message, Throwable cause) {
        super(message, cause);
    }
}
