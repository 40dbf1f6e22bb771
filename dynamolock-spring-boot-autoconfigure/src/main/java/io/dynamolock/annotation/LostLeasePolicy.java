package io.dynamolock.annotation;

/**
 * What a {@link QueueLocked} call does when the lock's lease was lost while the method ran
 * (the entry was purged after it expired, broken by an operator, or could not be renewed in time;
 * seen by a heartbeat, or by the release itself when none came first): the method's work was then
 * not protected by the lock.
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
