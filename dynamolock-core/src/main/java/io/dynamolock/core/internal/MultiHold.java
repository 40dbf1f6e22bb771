package io.dynamolock.core.internal;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockMode;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The handle of a request for several entities: one {@link Hold} per entity, in the order taken. Valid while
 * every part is; a lost part is a lost whole (its callbacks run once, for the first part lost); released part
 * by part, the last taken first.
 */
final class MultiHold implements LockHandle {

    private final List<LockHandle> parts;
    private final AtomicBoolean released = new AtomicBoolean();

    MultiHold(List<LockHandle> parts) {
        this.parts = List.copyOf(parts);
    }

    @Override
    public List<LockHandle> parts() {
        return parts;
    }

    @Override
    public String entity() {
        return parts.get(0).entity();
    }

    @Override
    public String namespace() {
        return parts.get(0).namespace();
    }

    @Override
    public String owner() {
        return parts.get(0).owner();
    }

    /** The first part's: each part is an entry of its own ({@link #parts()}). */
    @Override
    public String entryId() {
        return parts.get(0).entryId();
    }

    @Override
    public long fencingToken() {
        throw new IllegalStateException("This lock holds " + parts.size() + " entities "
                + Printable.escapeAll(fencingTokens().keySet())
                + ", each with a fencing token of its own; use fencingTokens() and fence each resource with its"
                + " entity's token");
    }

    /** Exclusive only if every part is: a part that joined an exclusive hold is held more strongly than asked. */
    @Override
    public LockMode mode() {
        return parts.stream().allMatch(part -> part.mode() == LockMode.EXCLUSIVE) ? LockMode.EXCLUSIVE
                : LockMode.SHARED;
    }

    @Override
    public boolean isValid() {
        return !released.get() && parts.stream().allMatch(LockHandle::isValid);
    }

    @Override
    public boolean wasLost() {
        return parts.stream().anyMatch(LockHandle::wasLost);
    }

    @Override
    public void onLost(Consumer<LockHandle> callback) {
        Objects.requireNonNull(callback, "callback must not be null");
        AtomicBoolean once = new AtomicBoolean();
        parts.forEach(part -> part.onLost(lost -> {
            if (once.compareAndSet(false, true)) {
                callback.accept(this);
            }
        }));
    }

    @Override
    public CompletableFuture<LockHandle> whenLost() {
        CompletableFuture<LockHandle> lost = new CompletableFuture<>();
        parts.forEach(part -> part.whenLost().thenRun(() -> lost.complete(this)));
        return lost;
    }

    @Override
    public void release() {
        if (released.compareAndSet(false, true)) {
            releaseAll(parts);
        }
    }

    @Override
    public CompletableFuture<Void> releaseAsync() {
        if (!released.compareAndSet(false, true)) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<?>[] parts = new CompletableFuture<?>[this.parts.size()];
        for (int i = parts.length - 1; i >= 0; i--) { // the last first, as release() does
            parts[i] = this.parts.get(i).releaseAsync();
        }
        return CompletableFuture.allOf(parts);
    }

    @Override
    public void releaseAfter(Duration delay) {
        Hold first = (Hold) parts.get(0);
        first.engine().releaseAfter(this, parts.stream().anyMatch(part -> ((Hold) part).entry().failClosed()), delay);
    }

    /** Releases {@code locks}, the last first; every one is released even if one fails, and the first failure is thrown. */
    static void releaseAll(List<LockHandle> locks) {
        RuntimeException failure = null;
        for (int i = locks.size() - 1; i >= 0; i--) {
            try {
                locks.get(i).release();
            }
            catch (RuntimeException ex) {
                if (failure == null) {
                    failure = ex;
                }
                else {
                    failure.addSuppressed(ex);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return "LockHandle" + parts.stream().map(LockHandle::toString).toList();
    }
}
