package io.dynamolock.autoconfigure;

import io.dynamolock.core.DynamoLockException;

/**
 * The application's first request to the lock table failed before DynamoDB answered (no credentials, no region, an
 * endpoint nobody listens on or that never answers), or DynamoDB refused its credentials. Reported by
 * {@link DynamoLockFailureAnalyzer} with the properties to check.
 */
class LockTableUnreachableException extends DynamoLockException {

    LockTableUnreachableException(String message, Throwable cause) {
        super(message, cause);
    }
}
