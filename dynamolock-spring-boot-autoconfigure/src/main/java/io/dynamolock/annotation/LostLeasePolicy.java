package io.dynamolock.annotation;

/**
 * What a {@link QueueLocked} call does when the lock's lease was lost while the method ran
 * (the entry was purged after it expired, or could not be renewed in time): the method's
 * work was then not protected by the lock.
 */
public enum LostLeasePolicy {

    /**
     * Fail the call with {@code LockLostException} once the method returns (a
     * {@code CompletableFuture} completes with it). If the method threw, its exception is
     * kept and the {@code LockLostException} is added to it as suppressed.
     */
    FAIL,

    /** Log a warning and return the method's result as usual. */
    LOG
}
