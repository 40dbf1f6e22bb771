package io.dynamolock.core.internal;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The removals of entries that left the queue, sent on request threads: at most {@link #PER_LOCK} of one lock at
 * once and {@link #TOTAL} of the template, the rest queued, each lock's in the order they came. Leaving waiters'
 * removals and {@code releaseAsync}'s come here, and the retries of every failed removal ({@link Leases}), a blocking
 * release's among them.
 *
 * <p>The request threads also renew every lease of the template (R12): a burst of cancelled waiters whose removals
 * DynamoDB is slow to answer (a latency spike, when callers give up) must not take them all, or healthy holders would
 * lose their leases while renewals are answered at once. Hence the template's cap, which leaves most of
 * {@link Workers#MAX_REQUEST_THREADS} to renewals. Within it each lock has a lane of its own: the removals of one item
 * are slow together (a hot, throttled item), and must not hold up the removal of another lock's waiter, whose entry
 * keeps that lock's next waiter out until it lands (a fail-closed one for ever). Locks with removals queued take
 * turns at the free threads.
 *
 * <p>What a caller chains to a removal (the future of {@code releaseAsync}, a leaving waiter's outcome) is the
 * caller's code: a reactive subscriber's pipeline, a resumed coroutine, which may be slow or block. It runs only
 * once the removal's room is free again ({@link #send(LockKey, Runnable, Runnable)}), so that a lock's slow callers
 * cannot keep its other removals unsent, nor a caller that acquires the lock again its own release.
 */
final class RemovalLane {

    /** Removals of one lock that may hold request threads at once. */
    static final int PER_LOCK = 16;

    /** Removals of the template that may hold request threads at once: a few slow locks' lanes. */
    static final int TOTAL = 4 * PER_LOCK;

    private final Workers workers;
    /** Removals not yet sent, by lock; the locks in the order they take their next turn. Guarded by this. */
    private final LinkedHashMap<LockKey, Deque<Removal>> queued = new LinkedHashMap<>();
    /** Removals being sent now, by lock. Guarded by this. */
    private final Map<LockKey, Integer> sending = new HashMap<>();
    /** Removals being sent now, in all. Guarded by this. */
    private int sendingInAll;

    RemovalLane(Workers workers) {
        this.workers = workers;
    }

    /** Sends {@code removal} of an entry of {@code key} on a request thread, now or once the lanes have room. */
    void send(LockKey key, Runnable removal) {
        send(key, removal, () -> { });
    }

    /**
     * {@link #send(LockKey, Runnable)}, then {@code afterFree} on the same thread once the removal's room is free
     * and the next queued removal started: where whatever waits for the removal is told it ended (code chained
     * to it may take its time). Runs whether or not {@code removal} threw.
     */
    void send(LockKey key, Runnable removal, Runnable afterFree) {
        synchronized (this) {
            queued.computeIfAbsent(key, k -> new ArrayDeque<>()).addLast(new Removal(removal, afterFree));
        }
        sendQueued();
    }

    /** Starts queued removals while there is room; each one that ends starts the next. Never throws. */
    private void sendQueued() {
        while (true) {
            Taken next = takeNext();
            if (next == null) {
                return; // nothing queued, or no room: one that ends starts the next
            }
            Runnable sent = () -> {
                try {
                    next.removal.send.run();
                }
                finally {
                    done(next.key);
                    sendQueued();
                    next.removal.afterFree.run();
                }
            };
            if (workers.tryRequestOrBusy(sent, "a removal of " + next.key)) {
                continue;
            }
            if (retryLater(next)) {
                return;
            }
            // Shut down: send it here, and the rest, so nothing is left behind (never while an entry is pending,
            // which keeps the threads).
            done(next.key);
            try {
                next.removal.send.run();
            }
            finally {
                next.removal.afterFree.run();
            }
        }
    }

    /**
     * Every request thread busy (or none could be started): {@code removal} is tried again shortly, first in its
     * lock's turn. Put back and its room freed in one step, so that no other removal of its lock (one that ends
     * starts the next) nor the timer's retry can start before it. {@code false} once shut down.
     */
    private synchronized boolean retryLater(Taken removal) {
        if (workers.schedule(this::sendQueued, Workers.BUSY_RETRY.toNanos()) == null) {
            return false;
        }
        putBack(removal);
        done(removal.key);
        return true;
    }

    /** The next removal whose lock and template have room, counted as being sent; {@code null} if none. */
    private synchronized Taken takeNext() {
        if (sendingInAll >= TOTAL) {
            return null;
        }
        Iterator<Map.Entry<LockKey, Deque<Removal>>> locks = queued.entrySet().iterator();
        while (locks.hasNext()) {
            Map.Entry<LockKey, Deque<Removal>> lock = locks.next();
            if (sending.getOrDefault(lock.getKey(), 0) >= PER_LOCK) {
                continue;
            }
            Removal removal = lock.getValue().pollFirst();
            locks.remove(); // to the end of the turns, if it has more
            if (!lock.getValue().isEmpty()) {
                queued.put(lock.getKey(), lock.getValue());
            }
            sending.merge(lock.getKey(), 1, Integer::sum);
            sendingInAll++;
            return new Taken(lock.getKey(), removal);
        }
        return null;
    }

    /** A removal of {@code key} ended, or was not started: its room is free. */
    private synchronized void done(LockKey key) {
        sending.computeIfPresent(key, (k, count) -> count == 1 ? null : count - 1);
        sendingInAll--;
    }

    /** A removal that could not be started goes first again, in its lock's turn first. */
    private synchronized void putBack(Taken removal) {
        Deque<Removal> own = queued.remove(removal.key);
        own = own == null ? new ArrayDeque<>() : own;
        own.addFirst(removal.removal);
        LinkedHashMap<LockKey, Deque<Removal>> rest = new LinkedHashMap<>(queued);
        queued.clear();
        queued.put(removal.key, own);
        queued.putAll(rest);
    }

    /** A removal to send, and what runs once its room is free again. */
    private record Removal(Runnable send, Runnable afterFree) {
    }

    private record Taken(LockKey key, Removal removal) {
    }
}
