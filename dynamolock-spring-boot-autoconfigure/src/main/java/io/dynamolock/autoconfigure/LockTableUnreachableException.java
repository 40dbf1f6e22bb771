package io.dynamolock.autoconfigure;

import io.dynamolock.core.DynamoLockException;

/**
 * The application's first request to the lock table failed before DynamoDB answered (no credentials, no region, an
 * endpoint nobody listens on or that never answers), or DynamoDB refused its credentials. Reported by
 * {@link DynamoLockFailureAnalyzer} with the properties to check.
 */
class LockTableUnreachableException extends DynamoLockException {

    private final boolean unanswered;

    /** @param unanswered whether DynamoDB did not answer in time (not a refusal, not a failure before sending) */
    LockTableUnreachableException(String message, Throwable cause, boolean unanswered) {
        super(message, cause);
        this.unanswered = unanswered;
    }

    /** Whether DynamoDB did not answer in time: the endpoint and the network are to check, not the credentials. */
    boolean unanswered() {
        return unanswered;
    }
}
