package io.dynamolock.samples.orders;

/**
 * A write carried an older fencing token than the one stored on the order: a later holder of the
 * order's lock has claimed it, so this holder's lease was lost and its write is rejected. Retrying
 * with the same token can never succeed. Answered as 409. If only the SDK's retry was rejected, the
 * first attempt may have landed, its answer lost, before the later holder claimed the order: the
 * update may then have been stored, and the client is told to look before it retries.
 */
class StaleFencingTokenException extends RuntimeException {

    private final String orderId;
    private final long token;
    private final long storedToken;

    StaleFencingTokenException(String orderId, long token, long storedToken, boolean rejectedOnRetry) {
        super("Write to order '" + orderId + "' with fencing token " + token + " rejected: a later lock holder"
                + " claimed it with token " + storedToken + ". This holder's lease was lost; "
                + (rejectedOnRetry ? "only a retry of its write was rejected, so the update may have been stored."
                        + " GET /orders/" + orderId + " to see whether it was before retrying"
                        : "its update was not applied"));
        this.orderId = orderId;
        this.token = token;
        this.storedToken = storedToken;
    }

    String orderId() {
        return orderId;
    }

    long token() {
        return token;
    }

    long storedToken() {
        return storedToken;
    }
}
