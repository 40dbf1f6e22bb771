package io.dynamolock.core.internal;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Same-JVM handoff: every queue state this JVM learns from a write that removed entries goes to every one
 * of this JVM's waiters of that lock at once (and its holders, until they leave), so a release lets in all
 * that may now hold (several readers behind a writer, several entries of a semaphore). Entries ahead of a
 * ticket can only disappear and the grant rule is monotone ({@link QueueState}), so a waiter that may hold
 * in any such state holds the lock without another request.
 */
final class Handoff {

    private final Map<LockKey, Set<Acquisition>> waiting = new ConcurrentHashMap<>();

    void register(Acquisition entry) {
        // Added inside the map's atomic update: added after it, the entry could land in a set that a concurrent
        // unregister has just dropped from the map as empty, and never hear of a release.
        waiting.compute(entry.key(), (key, entries) -> {
            Set<Acquisition> set = entries != null ? entries : ConcurrentHashMap.newKeySet();
            set.add(entry);
            return set;
        });
    }

    void unregister(Acquisition entry) {
        waiting.computeIfPresent(entry.key(), (key, entries) -> {
            entries.remove(entry);
            return entries.isEmpty() ? null : entries;
        });
    }

    /**
     * A write of this JVM was answered with {@code state} at {@code asOfMillis}: its waiters of the lock take it as
     * a release's; its holders learn who is behind them, or who is gone (a break), for their hand-over.
     */
    void publish(LockKey key, QueueState state, long asOfMillis) {
        offer(key, state.withAsOf(asOfMillis), false);
    }

    /**
     * An enqueue of this JVM that will wait was answered with {@code state} at {@code asOfMillis}: its entries of the
     * lock learn of the entry behind them, for their hand-over once they hold ({@link WakeUps#afterEnqueue} tells
     * those of other processes). Waiters are not woken: the lock is no freer than when they last looked, unless a
     * release they will hear of anyway came between.
     */
    void enqueued(LockKey key, QueueState state, long asOfMillis) {
        Set<Acquisition> entries = waiting.get(key);
        if (entries != null) {
            QueueState stamped = state.withAsOf(asOfMillis);
            entries.forEach(entry -> entry.learned(stamped));
        }
    }

    private void offer(LockKey key, QueueState state, boolean skipFailClosed) {
        Set<Acquisition> entries = waiting.get(key);
        if (entries != null) {
            for (Acquisition entry : entries) {
                if (!(skipFailClosed && entry.failClosed())) {
                    entry.learned(state);
                    entry.offer(state);
                }
            }
        }
    }

    /**
     * A holder of this JVM handed {@code key} over ({@link WakeUps#handOver}): its waiters get the state as the
     * processes of others do, so that one in this JVM is not let in later than one elsewhere. Fail-closed ones
     * excepted, for the same reason as there. Marked {@linkplain QueueState#asHandOver as handed over}: a grant on it
     * purges nothing beside it, as a grant on a hint's state does not.
     */
    void handOver(LockKey key, QueueState state) {
        offer(key, state.asHandOver(), true);
    }

    void wakeAll() {
        waiting.values().forEach(entries -> entries.forEach(Acquisition::wake));
    }
}
