package io.dynamolock.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * What a lexical scope holds (R10): the locks a piece of work runs inside, innermost first. Immutable; a
 * nested scope is {@code outer.with(lock)}. A request made with a scope joins a lock the scope holds
 * ({@link LockOperations#acquireAsync(LockRequest, LockScope)}), and nothing else does.
 *
 * <p>The callbacks of {@code execute} and {@code inScope} keep their scope in the calling thread
 * ({@link LockOperations#currentScope()}); code that hops threads (a Reactor {@code Context}, a coroutine
 * context) carries the value itself and passes it on.
 *
 * <pre>{@code
 * locks.acquireAsync(request).thenCompose(lock ->
 *         locks.acquireAsync(request, LockScope.empty().with(lock)));   // joins: same lock, same fencing token
 * }</pre>
 */
public final class LockScope {

    private static final LockScope EMPTY = new LockScope(null, null);

    private final LockHandle lock;
    private final LockScope outer;

    private LockScope(LockHandle lock, LockScope outer) {
        this.lock = lock;
        this.outer = outer;
    }

    /** A scope that holds nothing: a request made with it joins no lock. */
    public static LockScope empty() {
        return EMPTY;
    }

    /** This scope with {@code lock} inside it, innermost. This scope is unchanged. */
    public LockScope with(LockHandle lock) {
        return new LockScope(Objects.requireNonNull(lock, "lock must not be null"), this);
    }

    /** The locks this scope holds, innermost first. */
    public List<LockHandle> locks() {
        List<LockHandle> locks = new ArrayList<>();
        for (LockScope scope = this; scope.lock != null; scope = scope.outer) {
            locks.add(scope.lock);
        }
        return Collections.unmodifiableList(locks);
    }

    public boolean isEmpty() {
        return lock == null;
    }

    @Override
    public String toString() {
        return "LockScope" + locks();
    }
}
