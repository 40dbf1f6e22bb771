package io.dynamolock.core;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * A held lock. Release it exactly once, best with try-with-resources; further
 * releases do nothing. A handle may be released from any thread.
 *
 * <p>While held, the lease is renewed in the background. If it is lost (the entry
 * was purged by others after it expired, or renewals kept failing until the lease
 * ran out), {@link #isValid()} turns false and the lost-lease callbacks run once.
 *
 * <p>A handle of a {@linkplain LockRequest#entities() request for several entities} holds one single lock per
 * entity ({@link #parts()}), each with its own fencing token ({@link #fencingTokens()}); its
 * {@link #fencingToken()} refuses, since no one token fences them all. It is valid while every part is, and lost
 * when any part is lost.
 */
public interface LockHandle extends AutoCloseable {

    /** The locked entity (the item's partition key); of a lock of several entities, the first of them. */
    String entity();

    /** The lock's namespace (the item's sort key). */
    String namespace();

    /** The owner name of the template that took the lock: a label for people, not an identity. */
    String owner();

    /**
     * The identity of this acquisition's queue entry: random per acquisition (96 bits), so no other
     * acquisition of any process ever shares it, whatever the owner names.
     */
    String entryId();

    /**
     * The caller's ticket. Tickets of one lock strictly increase in grant order, also
     * across idle periods and TTL clean-up, so a resource guarded by this lock can
     * reject a write carrying a smaller token than one it has seen. That fences an exclusive lock of one permit
     * only: readers ({@link LockMode#SHARED}) and the holders of a semaphore's permits hold together, so a larger
     * token says nothing of a smaller one's lease there.
     *
     * @throws IllegalStateException for a lock of several entities: use {@link #fencingTokens()}
     */
    long fencingToken();

    /** The fencing token of each entity this handle locks, in the order they were taken. */
    default Map<String, Long> fencingTokens() {
        Map<String, Long> tokens = new LinkedHashMap<>();
        parts().forEach(part -> tokens.put(part.entity(), part.fencingToken()));
        return Collections.unmodifiableMap(tokens);
    }

    /** The single locks this handle holds, in the order they were taken: just this one but for several entities. */
    default List<LockHandle> parts() {
        return List.of(this);
    }

    /**
     * The mode of the entry held: the request's, or, for a request that joined a lock its scope holds, that
     * lock's (a shared request that joins an exclusive hold holds it exclusively). Of a lock of several entities,
     * {@link LockMode#EXCLUSIVE} only if every part is held exclusively; {@link #parts()} tells each part's.
     */
    LockMode mode();

    /**
     * Whether the lease is still held: not released, not lost, and renewed recently
     * enough on this JVM's monotonic clock.
     */
    boolean isValid();

    /**
     * Whether the lease was lost, at any time: while held ({@link #isValid()} then turned false), or found by the
     * release, whose removal found the entry gone already (purged by another process after the lease expired, or
     * broken by an operator) before any heartbeat told this process. After {@link #release()} has returned,
     * {@code true} means the work done under the lock may have overlapped with another holder's. {@code false} if
     * the release could not tell (its request failed and is retried in the background).
     */
    boolean wasLost();

    /**
     * Runs {@code callback} once if the lease is lost before release, or the release finds it was; at once if it
     * is lost already. Callbacks run on a heartbeat thread and should return quickly. A handle that joined a lock
     * its scope holds drops its callbacks when it is released before the lock is: a loss after that is not its.
     */
    void onLost(Consumer<LockHandle> callback);

    /**
     * A future completed with this handle when the lease is lost before release, or the release finds it was:
     * when {@link #onLost} callbacks run, but not in line behind them: on a request thread of its own, or, when
     * every one is busy, on a few threads kept for these completions (behind other locks' completions only; on the
     * thread that found the loss if no thread can be started at all). It is meant for stopping the work the lock
     * guards (a subscription cancelled, a coroutine cancelled), which another lock's callback that blocks must
     * not delay; stages chained to it without an executor run on a dynamolock thread, so should not block. It
     * never completes for a lock released unlost. Each call returns a new future: completing or cancelling it
     * changes nothing else. A handle that joined a lock its scope holds stops following it when released, as its
     * callbacks do.
     *
     * <p>The default implementation completes it from an {@link #onLost} callback.
     */
    default CompletableFuture<LockHandle> whenLost() {
        CompletableFuture<LockHandle> lost = new CompletableFuture<>();
        onLost(lost::complete);
        return lost;
    }

    /**
     * Leaves the queue, handing the lock to the next waiter. Idempotent; for a
     * re-entered lock, only the outermost release gives it up.
     */
    void release();

    /**
     * Releases as {@link #release()} does, and returns at once: the lock is given up in this JVM now
     * ({@link #isValid()} turns false, renewals stop), and its removal is sent on the template's own threads, so a
     * caller that must not block (an event loop, a coroutine) needs no pool of its own, nor one that its other
     * work may fill. The future completes once DynamoDB answered the removal: {@link #wasLost()} then tells what
     * it tells after {@code release()} has returned. Like a leaving waiter's removal, it waits its turn when one
     * lock's removals, or the template's, are many and slow, so that renewals keep their threads. A failed removal
     * is retried in the background, as {@code release()} retries it: the future completes all the same.
     *
     * <p>The default implementation calls {@link #release()} on the common pool.
     */
    default CompletableFuture<Void> releaseAsync() {
        return CompletableFuture.runAsync(this::release);
    }

    /**
     * Releases this lock once {@code delay} has passed, and returns at once: a minimum hold (ShedLock's
     * {@code lockAtLeastFor}), so that work that ended early still keeps others out until then. The lock stays
     * held and renewed as usual meanwhile; {@link #release()} before then releases it at once. If the template is
     * closed first, a fail-closed lock is released then, since it would never expire and the work it guarded
     * has finished; a fail-open one is left to expire with its lease, so it keeps others out for about that long
     * still. A delay of zero or less is released now, as {@link #release()} releases it: on the calling thread,
     * answered when this returns. A positive delay does not block while the template runs: a lock no longer valid (lost,
     * or released already) is released now as {@link #releaseAsync()} releases it, its removal sent on the
     * template's threads; only while the template closes is a fail-closed one released on the calling thread.
     *
     * @param delay how long from now the lock is kept at least
     */
    void releaseAfter(Duration delay);

    /** Same as {@link #release()}. */
    @Override
    default void close() {
        release();
    }
}
