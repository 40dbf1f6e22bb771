package io.dynamolock.core.internal;

import io.dynamolock.core.LockCallback;
import io.dynamolock.core.LockHandle;

/**
 * The locks a thread holds lexically (R10): while a callback runs inside {@code execute} (or
 * {@code inScope}), its lock is in the thread's scope, and a request for the same lock made from
 * within joins it. Nothing else joins: a handle returned by {@code acquire()} belongs to the handle,
 * so a later task on the same pooled thread queues like anyone else.
 */
final class LockScopes {

    /** One scope: a lock held for the duration of a callback, and the scope around it. */
    private record Scope(Acquisition entry, Scope outer) {
    }

    private final ThreadLocal<Scope> current = new ThreadLocal<>();

    /** The entry of {@code key} that the calling thread's scopes hold, innermost first, or {@code null}. */
    Acquisition find(LockKey key) {
        for (Scope scope = current.get(); scope != null; scope = scope.outer()) {
            if (scope.entry().key().equals(key)) {
                return scope.entry();
            }
        }
        return null;
    }

    /** Runs {@code callback} with {@code entry} in the calling thread's scope. */
    <T, E extends Throwable> T run(Acquisition entry, LockHandle handle, LockCallback<T, E> callback) throws E {
        Scope outer = current.get();
        current.set(new Scope(entry, outer));
        try {
            return callback.doWithLock(handle);
        }
        finally {
            if (outer == null) {
                current.remove();
            }
            else {
                current.set(outer);
            }
        }
    }
}
