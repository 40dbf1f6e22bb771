package io.dynamolock.reactive;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockScope;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * Locks for reactive code: the lock is asked for on subscription without blocking the subscribing thread and
 * without holding any thread while it waits, held while the body's publisher runs, and released when it
 * completes, errors or is cancelled. Re-entry is lexical through the Reactor {@code Context}: the body runs with
 * the lock's {@link LockScope} in its context (key {@code LockScope.class}), so a request for the same lock made
 * inside the body joins it, and nothing else does.
 */
public interface ReactiveLockOperations {

    /**
     * Runs {@code body} holding the lock, at most one value.
     *
     * <p>Waiting runs out: {@code LockWaitTimeoutException}. Cancelled while waiting: the entry leaves the
     * queue. Lease lost while the body runs: see the template's lost-lease policy.
     */
    <T> Mono<T> execute(LockRequest request, Function<? super LockHandle, ? extends Publisher<T>> body);

    /** As {@link #execute}, for a body of many values: the lock is held until the last one. */
    <T> Flux<T> executeMany(LockRequest request, Function<? super LockHandle, ? extends Publisher<T>> body);

    /** The lock scope a Reactor context carries: the locks of the bodies it runs inside. */
    static LockScope scope(ContextView context) {
        return context.getOrDefault(LockScope.class, LockScope.empty());
    }
}
