package io.dynamolock.annotation;

/**
 * What a {@link QueueLocked} call does when its wait for the lock runs out (with
 * {@code maxWait = "0"}: when anyone holds or waits for the lock).
 */
public enum WaitTimeoutPolicy {

    /** Throw {@code LockWaitTimeoutException} (a {@code CompletableFuture} method: throw it from the call). */
    FAIL,

    /**
     * Do not run the method and return normally: {@code null} for a {@code void} method, a future completed
     * with {@code null} for an asynchronous one, a {@code Mono}, {@code Flux} or {@code Flow} that completes
     * empty for a reactive one, and a suspend function returns without running. For work that one instance at a
     * time should do and that may skip a turn, such as a {@code @Scheduled} job: the skip is logged at DEBUG,
     * counted ({@code dynamolock.skipped}) and published as a {@link QueueLockedSkippedEvent}, never logged as an
     * error. Only for methods that return nothing, since a skipped call has no value to return: {@code void} or
     * {@code Void}; a {@code CompletableFuture}, {@code CompletionStage}, {@code Mono}, {@code Flux} or Kotlin
     * {@code Flow} of {@code Void}; or a Kotlin {@code suspend fun} returning {@code Unit}. Any other method
     * with {@code SKIP} fails the start.
     */
    SKIP
}
