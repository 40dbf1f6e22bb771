package io.dynamolock.core.internal;

import io.dynamolock.core.LockCallback;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockLostException;
import io.dynamolock.core.LockScope;

/**
 * The lexical scope of each thread (R10): while a callback runs inside {@code execute} (or
 * {@code inScope}), the thread's {@link LockScope} holds its lock, and a request for the same lock made
 * from within joins it. Nothing else joins: a handle returned by {@code acquire()} belongs to the handle,
 * so a later task on the same pooled thread queues like anyone else. The same {@link LockScope} value
 * serves code that carries its scope itself (a Reactor context, a coroutine), so there is one record of
 * what a scope holds, whoever carries it.
 */
final class LockScopes {

    private final ThreadLocal<LockScope> current = ThreadLocal.withInitial(LockScope::empty);

    /** The calling thread's scope. */
    LockScope current() {
        return current.get();
    }

    /** Runs {@code callback} with {@code handle} in the calling thread's scope. */
    <T, E extends Throwable> T run(LockHandle handle, LockCallback<T, E> callback) throws E {
        LockScope outer = current.get();
        current.set(outer.with(handle));
        try {
            return callback.doWithLock(handle);
        }
        catch (Throwable thrown) {
            Throwable escaping = LockLostException.escapingWork(thrown); // the callback ran: never "not granted"
            if (escaping != thrown) {
                throw (LockLostException) escaping;
            }
            throw thrown;
        }
        finally {
            if (outer.isEmpty()) {
                current.remove();
            }
            else {
                current.set(outer);
            }
        }
    }
}
