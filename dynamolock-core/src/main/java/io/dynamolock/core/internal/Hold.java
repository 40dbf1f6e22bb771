package io.dynamolock.core.internal;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/** What one acquire call returns: one hold on an entry, released at most once. */
final class Hold implements LockHandle {

    private final Acquisition entry;
    private final LockEngine engine;
    private final AtomicBoolean released = new AtomicBoolean();
    /** Counted on the entry as a hold that something besides its acquiring thread releases. */
    private final AtomicBoolean releasedElsewhere = new AtomicBoolean();
    /**
     * What takes this hold's lost-lease callbacks off its entry: a hold that joined a lock held longer (R10) is
     * released while the entry lives on, and its callbacks must not pile up there.
     */
    private final List<Runnable> registrations = new ArrayList<>();

    Hold(Acquisition entry, LockEngine engine) {
        this.entry = entry;
        this.engine = engine;
    }

    Acquisition entry() {
        return entry;
    }

    LockEngine engine() {
        return engine;
    }

    /** Whether this hold was released (its entry may live on under other holds). */
    boolean released() {
        return released.get();
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
    public String entryId() {
        return entry.id();
    }

    @Override
    public long fencingToken() {
        return entry.ticket();
    }

    @Override
    public LockMode mode() {
        return entry.mode();
    }

    @Override
    public boolean isValid() {
        return !released.get() && entry.isValid();
    }

    @Override
    public boolean wasLost() {
        return entry.wasLost();
    }

    @Override
    public void onLost(Consumer<LockHandle> callback) {
        Objects.requireNonNull(callback, "callback must not be null");
        keep(entry.onLost(lost -> callback.accept(this)));
    }

    @Override
    public CompletableFuture<LockHandle> whenLost() {
        CompletableFuture<LockHandle> lost = new CompletableFuture<>();
        keep(entry.onLostReaction(ignored -> lost.complete(this)));
        return lost;
    }

    private void keep(Runnable registration) {
        synchronized (registrations) {
            if (released.get() && entry.phase() != Acquisition.Phase.RELEASED) {
                registration.run(); // released while the entry lives on: a later loss is not this hold's
                return;
            }
            registrations.add(registration);
        }
    }

    /** Released while other holds of the entry go on: a loss after this is theirs, not this hold's. */
    void forgetLostCallbacks() {
        synchronized (registrations) {
            registrations.forEach(Runnable::run);
            registrations.clear();
        }
    }

    @Override
    public void release() {
        if (released.compareAndSet(false, true)) {
            uncountElsewhere();
            engine.release(this);
        }
    }

    @Override
    public CompletableFuture<Void> releaseAsync() {
        if (!released.compareAndSet(false, true)) {
            return CompletableFuture.completedFuture(null);
        }
        uncountElsewhere();
        return engine.releaseInBackground(this);
    }

    /**
     * Counts this hold on its entry as one that something besides the entry's acquiring thread releases (a
     * timer, another thread), which keeps a thread-bound entry renewed after that thread ended. Set before
     * {@code released} is read, as release() sets {@code released} before it reads this: one of them uncounts it.
     */
    void releasedElsewhere() {
        if (releasedElsewhere.compareAndSet(false, true)) {
            entry.releasedElsewhere(1);
            if (released.get()) {
                uncountElsewhere();
            }
        }
    }

    private void uncountElsewhere() {
        if (releasedElsewhere.compareAndSet(true, false)) {
            entry.releasedElsewhere(-1);
        }
    }

    @Override
    public void releaseAfter(Duration delay) {
        engine.releaseAfter(this, entry.failClosed(), delay);
    }

    @Override
    public String toString() {
        return "LockHandle[" + entry + "]";
    }
}
