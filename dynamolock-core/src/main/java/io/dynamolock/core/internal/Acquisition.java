package io.dynamolock.core.internal;

import io.dynamolock.core.LockAttempt;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockMode;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One acquisition: its entry in a lock's queue, from enqueue to release: its random id, its
 * ticket, its lease as this JVM last confirmed it, and the mailbox through which heartbeats
 * and same-JVM releases hand fresh queue states to its {@link Waiter}.
 */
final class Acquisition {

    private static final Logger log = LoggerFactory.getLogger(Acquisition.class);

    enum Phase { WAITING, HELD, RELEASED, LOST }

    private final LockKey key;
    private final String id = EntryIds.next();
    private final String owner;
    private final Duration lease;
    private final boolean failClosed;
    private final LockAttempt attempt;
    private final Thread acquiredBy;
    private final boolean threadBound;
    private final Executor callbacks;
    private final Executor reactions;
    private volatile Runnable waker = () -> { };
    private final AtomicReference<Phase> phase = new AtomicReference<>(Phase.WAITING);
    private final AtomicReference<QueueState> offered = new AtomicReference<>();
    private final AtomicReference<QueueState> known = new AtomicReference<>();
    private final AtomicInteger holds = new AtomicInteger();
    /** Holds of it that something besides {@link #acquiredBy} releases: see {@link #abandonedByItsThread}. */
    private final AtomicInteger releasedElsewhere = new AtomicInteger();
    private final AtomicBoolean abandonedWarned = new AtomicBoolean();
    /**
     * In registration order, each with where it runs; keyed, so that a joined hold's release takes its own out at
     * once.
     */
    private final Map<Consumer<Acquisition>, Executor> lostCallbacks = new LinkedHashMap<>();
    private volatile long ticket;
    private volatile long confirmedUntilNanos;
    private volatile Instant since = Instant.now();
    private volatile long grantedAtNanos;
    private volatile long enqueuedAtMillis;
    /** An attempt of the enqueue was given up on (an SDK retry, a time-out): DynamoDB may apply it late. */
    private volatile boolean enqueueMayLandLate;
    private volatile PredictivePolling.History history = PredictivePolling.History.NONE;
    private volatile String lostReason;
    /** The handle the grant gave out: every listener event of the hold names it, whichever handle released it. */
    private volatile LockHandle handle;
    /** Whether the lease was lost (guarded by {@link #lostCallbacks}): the phase moves on to RELEASED after. */
    private boolean lost;

    /**
     * @param owner     the template's owner name: a label for people, not part of the entry's identity
     * @param failClosed whether others must never treat the entry as expired
     * @param mode      the entry's mode
     * @param permits   the permits the request asks the lock for
     * @param threadBound whether only {@code acquiredBy} releases the lock ({@code LockRequest.threadBound})
     * @param acquiredBy the thread that waits for the grant in a blocking {@code acquire()}, {@code null} for an
     *                  asynchronous one, which no thread waits for
     * @param callbacks where lost-lease callbacks run, so that a slow one delays no other lease
     * @param reactions where the library's own reactions to a loss run, so that slow callbacks delay none of them
     */
    Acquisition(LockKey key, String owner, Duration lease, boolean failClosed, LockMode mode, int permits,
            Thread acquiredBy, boolean threadBound, Executor callbacks, Executor reactions) {
        this.key = key;
        this.owner = owner;
        this.lease = lease;
        this.failClosed = failClosed;
        this.attempt = new LockAttempt(id, key.entity(), key.namespace(), mode, permits);
        this.acquiredBy = acquiredBy;
        this.threadBound = threadBound;
        this.callbacks = callbacks;
        this.reactions = reactions;
    }

    LockKey key() {
        return key;
    }

    /** The entry's identity in the queue: random per acquisition (R8). */
    String id() {
        return id;
    }

    String owner() {
        return owner;
    }

    Duration lease() {
        return lease;
    }

    /** Fail-closed: changes what others do (never purge it), not what this JVM believes of its lease. */
    boolean failClosed() {
        return failClosed;
    }

    /** The acquisition as listeners hear of it, from {@code onAcquiring} to its outcome. */
    LockAttempt attempt() {
        return attempt;
    }

    LockMode mode() {
        return attempt.mode();
    }

    /** The handle the grant gave out ({@code onAcquired}'s), {@code null} before. */
    LockHandle handle() {
        return handle;
    }

    void handedOutAs(LockHandle granted) {
        handle = granted;
    }

    int permits() {
        return attempt.permits();
    }

    /** What the enqueue writes; {@code address} is this process's wake-up address, {@code null} without hints. */
    QueueTable.NewEntry newEntry(String address) {
        return new QueueTable.NewEntry(id, owner, lease, failClosed, mode() == LockMode.SHARED, permits(), address);
    }

    long ticket() {
        return ticket;
    }

    Phase phase() {
        return phase.get();
    }

    /**
     * The thread blocked in {@code acquire()} until this entry is granted, or {@code null}: only for telling a
     * thread that it waits behind its own hold, never for waking it.
     */
    Thread acquiredBy() {
        return acquiredBy;
    }

    /** Whether only {@link #acquiredBy()} releases it: that thread must never wait for it. */
    boolean threadBound() {
        return threadBound;
    }

    /** One more (or, {@code -1}, one less) hold of it that something besides {@link #acquiredBy} releases. */
    void releasedElsewhere(int delta) {
        releasedElsewhere.addAndGet(delta);
    }

    /**
     * Whether it is held for a thread-bound caller whose thread ended without releasing it, and by nothing else:
     * nobody may release it, so renewed it would keep the lock from everyone for as long as this process lives.
     * Holds that something else releases keep it alive: a minimum hold (the template's timer), a join from
     * another thread or a carried scope, a join that is not thread-bound.
     */
    boolean abandonedByItsThread() {
        return threadBound && acquiredBy != null && !acquiredBy.isAlive() && phase.get() == Phase.HELD
                && releasedElsewhere.get() == 0;
    }

    /** {@code true} the first time only: an abandoned entry is reported once, however often it is looked at. */
    boolean warnAbandoned() {
        return abandonedWarned.compareAndSet(false, true);
    }

    Instant since() {
        return since;
    }

    long grantedAtNanos() {
        return grantedAtNanos;
    }

    String lostReason() {
        return lostReason != null ? lostReason : "not renewed within the lease";
    }

    void enqueued(long ticket, long sentAtNanos) {
        this.ticket = ticket;
        this.confirmedUntilNanos = sentAtNanos + lease.toNanos();
    }

    /** When the enqueue was sent, on the wall clock: from then on this entry could have held. */
    void enqueuedAt(long millis) {
        this.enqueuedAtMillis = millis;
    }

    /**
     * An attempt of this entry's enqueue got no answer in time, so DynamoDB may still apply it, also after the entry
     * has left the queue: then it adds the entry again, which nobody renews or removes.
     */
    void enqueueMayLandLate() {
        this.enqueueMayLandLate = true;
    }

    boolean enqueueCanLandLate() {
        return enqueueMayLandLate;
    }

    /** The state that granted this entry; its history is what the entry's release builds on. */
    void grantedWith(QueueState state) {
        this.history = state.history();
        learned(state);
    }

    /**
     * A state of the lock reached this entry, stamped with when it was true ({@link QueueState#asOfMillis}): an
     * answer to its requests or its renewals, a same-JVM release's, a hint's, a break's. What the entry knows is
     * all of them merged ({@link QueueState#merge}): who enqueued behind it, and who left, an operator's break
     * included, whichever order the news came in. Its hand-over is built from it.
     */
    void learned(QueueState state) {
        if (isLive()) {
            known.accumulateAndGet(state, (held, fresh) -> held == null ? fresh : held.merge(fresh));
        }
    }

    /** The lock as this entry knows it since its enqueue, or {@code null} before any answer. */
    QueueState known() {
        return known.get();
    }

    /**
     * The history this entry's release writes, released at {@code nowMillis}; {@code null} if it never held (a
     * waiter that gives up releases nothing, and its wait says nothing of hold times).
     */
    PredictivePolling.History releaseHistory(Phase previous, long nowMillis) {
        return previous == Phase.HELD ? history.afterRelease(enqueuedAtMillis, nowMillis) : null;
    }

    /** A renewal sent at {@code sentAtNanos} succeeded: the lease runs at least a lease from then. */
    void renewed(long sentAtNanos) {
        this.confirmedUntilNanos = sentAtNanos + lease.toNanos();
    }

    /** When the lease as last confirmed ends, on the {@link System#nanoTime()} scale. */
    long confirmedUntilNanos() {
        return confirmedUntilNanos;
    }

    boolean isLive() {
        Phase current = phase.get();
        return current == Phase.WAITING || current == Phase.HELD;
    }

    /** Held, and the lease as last confirmed has not ended: in-flight renewals do not count (R11). */
    boolean isValid() {
        return phase.get() == Phase.HELD && System.nanoTime() - confirmedUntilNanos < 0;
    }

    /**
     * The entry is first in the queue. {@code false} if its lease was lost or ran out meanwhile: then it must
     * not be handed out, since another process may already have purged it and taken the lock.
     */
    boolean granted() {
        grantedAtNanos = System.nanoTime();
        since = Instant.now();
        holds.set(1);
        return phase.compareAndSet(Phase.WAITING, Phase.HELD) && isValid();
    }

    /** Re-entry: one more hold on a held, valid entry; {@code false} once it is released or lost. */
    boolean join() {
        while (isValid()) {
            int current = holds.get();
            if (current <= 0) {
                return false;
            }
            if (holds.compareAndSet(current, current + 1)) {
                return true;
            }
        }
        return false;
    }

    /** How many holds (the first and those that joined it, R10) have not been dropped. */
    int holdCount() {
        return holds.get();
    }

    /** Drops one hold; {@code true} when it was the last and the entry must leave the queue. */
    boolean dropHold() {
        return holds.decrementAndGet() == 0;
    }

    /** Marks the entry released (from held, lost or waiting) and returns the phase it had. */
    Phase markReleased() {
        return phase.getAndSet(Phase.RELEASED);
    }

    /**
     * The lease is gone. Runs the lost-lease callbacks once, and wakes the waiter, if any, so it can stop
     * waiting. {@code false} if the entry was not live any more.
     */
    boolean markLost(String reason) {
        Phase previous;
        do { // a grant may move WAITING to HELD meanwhile: the loss then is the holder's, not skipped
            previous = phase.get();
            if (previous != Phase.HELD && previous != Phase.WAITING) {
                return false;
            }
        } while (!phase.compareAndSet(previous, Phase.LOST));
        lostReason = reason;
        List<Map.Entry<Consumer<Acquisition>, Executor>> registered;
        synchronized (lostCallbacks) {
            lost = true;
            registered = List.copyOf(lostCallbacks.entrySet());
        }
        registered.forEach(this::handOver);
        wake();
        return true;
    }

    /**
     * The release found the entry gone: the lease was lost before it (purged or broken) and nothing had told this
     * JVM. Runs the lost-lease callbacks, as {@link #markLost} does; the phase stays released.
     */
    void lostAtRelease(String reason) {
        List<Map.Entry<Consumer<Acquisition>, Executor>> registered;
        synchronized (lostCallbacks) {
            if (lost) {
                return;
            }
            lostReason = reason;
            lost = true;
            registered = List.copyOf(lostCallbacks.entrySet());
        }
        registered.forEach(this::handOver);
    }

    /**
     * Hands a lost-lease callback to where it runs. The template's executors never throw: one that cannot take a
     * callback now hands it over again later, never running a user callback on the timer that found the loss
     * ({@link Workers#callbacks()}). An executor that throws anyway has the callback run on this thread, last resort:
     * lost, an application would never learn of its loss; and the hand-off of one must skip neither the others nor
     * the rest of the loss.
     */
    private void handOver(Map.Entry<Consumer<Acquisition>, Executor> callback) {
        try {
            callback.getValue().execute(() -> runCallback(callback.getKey()));
        }
        catch (Throwable refused) {
            log.warn("Could not hand a lost-lease callback of {} over ({}); running it on this thread", this,
                    refused.toString());
            runCallback(callback.getKey());
        }
    }

    /** Whether the lease was lost, while held or found at the release. */
    boolean wasLost() {
        synchronized (lostCallbacks) {
            return lost;
        }
    }

    /**
     * Registers a lost-lease callback; one registered after the loss runs at once, on the calling thread, also
     * once the lost entry was released. Returns what takes it out again, unrun.
     */
    Runnable onLost(Consumer<Acquisition> callback) {
        return onLost(callback, callbacks);
    }

    /** Registers the library's own reaction to a loss: as {@link #onLost(Consumer)}, run where reactions run. */
    Runnable onLostReaction(Consumer<Acquisition> reaction) {
        return onLost(reaction, reactions);
    }

    private Runnable onLost(Consumer<Acquisition> callback, Executor where) {
        synchronized (lostCallbacks) {
            if (!lost) {
                lostCallbacks.put(callback, where);
                return () -> {
                    synchronized (lostCallbacks) {
                        lostCallbacks.remove(callback);
                    }
                };
            }
        }
        runCallback(callback);
        return () -> { };
    }

    /** How many lost-lease callbacks wait for a loss. */
    int lostCallbacks() {
        synchronized (lostCallbacks) {
            return lostCallbacks.size();
        }
    }

    private void runCallback(Consumer<Acquisition> callback) {
        try {
            callback.accept(this);
        }
        catch (RuntimeException ex) {
            log.warn("Lost-lease callback of {} failed", this, ex);
        }
    }

    /**
     * Hands a queue state to the waiter and wakes it. States of one lock reach us from several threads (releases,
     * purges, heartbeats) in no particular order, so the mailbox keeps the one with the fewest entries ahead of
     * us: entries ahead of a ticket only ever disappear, so that one is the newest, and a late, older state must
     * not hide it (the waiter would then wait for a poll instead of taking the lock).
     */
    void offer(QueueState state) {
        if (keepOffered(state)) {
            wake();
        }
    }

    /** As {@link #offer} without waking the waiter: the caller takes its next step itself. */
    boolean keepOffered(QueueState state) {
        if (phase.get() != Phase.WAITING) {
            return false;
        }
        offered.accumulateAndGet(state, (held, fresh) -> isNewer(fresh, held) ? fresh : held);
        return true;
    }

    /**
     * Whether {@code candidate} is newer than {@code known} for this entry: of two states of which one lets the entry
     * hold, that one; else it holds the entry and fewer entries ahead of it, or as many and it was true no earlier.
     * A state without the entry predates our enqueue (or follows a purge of it). Both states are true, and entries
     * ahead of a ticket only leave, so one that lets the entry hold proves it may, whatever the other shows: each may
     * miss departures the other shows (a writer ahead of a reader that a hand-over leaves out, readers ahead that
     * gave up unbeknown to the writer), so the count of entries ahead does not say which is later. The times break
     * ties so that a state already acted on, offered again (a hint duplicated or replayed, its item aged since), is
     * no news: acting on it again would cost a request each time.
     */
    boolean isNewer(QueueState candidate, QueueState known) {
        if (known == null) {
            return true;
        }
        boolean holds = letsHold(candidate);
        if (holds != letsHold(known)) {
            return holds;
        }
        int ahead = aheadOf(candidate);
        int knownAhead = aheadOf(known);
        return ahead < knownAhead || ahead == knownAhead && candidate.asOfMillis() >= known.asOfMillis();
    }

    private boolean letsHold(QueueState state) {
        QueueState.Entry self = state.entry(id);
        return self != null && state.blockers(self).hold();
    }

    private int aheadOf(QueueState state) {
        // The ticket as the state says: a state may arrive while the enqueue's answer, which sets ours, is in flight.
        QueueState.Entry self = state.entry(id);
        return self == null ? Integer.MAX_VALUE : state.ahead(self.ticket()).size();
    }

    /** The latest state offered since the last call, or {@code null}. */
    QueueState takeOffered() {
        return offered.getAndSet(null);
    }

    /** What wakes this entry's waiter: it then takes its next step (on its own thread, not the caller's). */
    void onWake(Runnable waker) {
        this.waker = waker;
    }

    /** Wakes the waiter without a state, e.g. when the template closes. */
    void wake() {
        waker.run();
    }

    /** How often this entry is renewed: the template's interval, or half a shorter per-request lease. */
    Duration renewalInterval(Duration templateInterval) {
        Duration half = lease.dividedBy(2);
        return half.compareTo(templateInterval) < 0 ? half : templateInterval;
    }

    @Override
    public String toString() {
        return key + " id=" + id + " owner=" + Printable.escape(owner) + " ticket=" + ticket
                + (failClosed ? " fail-closed " : " ")
                + mode() + (permits() > 1 ? " permits=" + permits() + " " : " ") + phase.get();
    }
}
