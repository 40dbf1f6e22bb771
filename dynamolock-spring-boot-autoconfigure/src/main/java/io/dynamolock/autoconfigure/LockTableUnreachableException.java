package io.dynamolock.autoconfigure;

import io.dynamolock.core.DynamoLockException;

/**
 * The application's first request to the lock table failed before DynamoDB answered: no credentials, no region, or
 * an endpoint nobody listens on. Reported by {@link DynamoLockFailureAnalyzer} with the properties to check.
 */
class LockTableUnreachableException extends DynamoLockException {

    LockTableUnreachableException(String message, Throwable cause) {
        super(message, cause);
    }
}
