package io.dynamolock.core.internal;

import io.dynamolock.core.LockHandle;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/** What one acquire call returns: one hold on an entry, released at most once. */
final class Hold implements LockHandle {

    private final QueueEntry entry;
    private final LockEngine engine;
    private final LockEngine.ThreadLock registration;
    private final AtomicBoolean released = new AtomicBoolean();

    /**
     * @param registration the thread's claim on the lock, for re-entry, when this is the hold that made it;
     *                     released with this hold, so that a hold outliving it (an async method's) does not
     *                     keep the thread joining a lock it no longer holds
     */
    Hold(QueueEntry entry, LockEngine engine, LockEngine.ThreadLock registration) {
        this.entry = entry;
        this.engine = engine;
        this.registration = registration;
    }


    QueueEntry entry() {
        return entry;
    }

    LockEngine.ThreadLock registration() {
        return registration;
    }

    @Override
    public String entity() {
        return entry.key().entity();
    }

    @Override
    public String namespace() {
        return entry.key().namespace();
    }

    @Override
    public String owner() {
        return entry.owner();
    }

    @Override
    public long fencingToken() {
        return entry.ticket();
    }

    @Override
    public boolean isValid() {
        return !released.get() && entry.isValid();
    }

    @Override
    public void onLost(Consumer<LockHandle> callback) {
        Objects.requireNonNull(callback, "callback must not be null");
        entry.onLost(lost -> callback.accept(this));
    }

    @Override
    public void release() {
        if (released.compareAndSet(false, true)) {
            engine.release(this);
        }
    }

    @Override
    public String toString() {
        return "LockHandle[" + entry + "]";
    }
}
