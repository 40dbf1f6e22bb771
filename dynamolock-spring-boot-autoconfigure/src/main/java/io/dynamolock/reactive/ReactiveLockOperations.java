package io.dynamolock.reactive;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockScope;
import java.util.List;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;
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

    /**
     * A context write that carries {@code scope} into a publisher, so that a request it makes for a lock the scope
     * holds joins it. The way to block on a locked publisher inside a blocking hold of the same lock (a
     * {@code @QueueLocked} method, an {@code execute} callback): a publisher does not join what its calling thread
     * holds, since anything may run on that thread (a sink's subscriber, a coroutine resumed there), so without it
     * the call queues behind the hold that waits for it.
     *
     * <pre>{@code
     * orders.reserve(orderId).contextWrite(ReactiveLockOperations.inScope(locks.currentScope())).block();
     * }</pre>
     *
     * A scope the subscriber's context already carries stays innermost.
     */
    static Function<Context, Context> inScope(LockScope scope) {
        if (scope == null) {
            throw new IllegalArgumentException("scope must not be null; pass LockOperations.currentScope()");
        }
        return context -> {
            LockScope nested = scope;
            List<LockHandle> inner = scope(context).locks();
            for (int i = inner.size() - 1; i >= 0; i--) {
                nested = nested.with(inner.get(i));
            }
            return nested.isEmpty() ? context : context.put(LockScope.class, nested);
        };
    }
}
