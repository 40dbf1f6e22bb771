package io.dynamolock.core.internal;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The rules of waiting, as a pure function from what a waiter knows to what it does next. {@link Waiter}
 * applies them, one step per event (the enqueue's answer, a state offered by a same-JVM release or a
 * heartbeat, a poll's answer, the timer); nothing here sends a request or waits.
 *
 * <ol>
 * <li>Look at the latest queue state: if the entries ahead of ours allow it ({@link QueueState#blockers}, the
 * grant rule of exclusive, shared and semaphore entries), we hold the lock.</li>
 * <li>If enough of the entries that keep us out have expired by our clock that purging them lets us hold,
 * purge them (each only if not renewed since) and look again at the state the purge returns; never
 * otherwise, so nothing is purged that would not change our answer. A fail-closed entry never expires: it
 * only ever counts as live. The one exception: a fail-closed entry ahead of ours whose lease has run out while
 * the entries ahead of it keep it out never held, so we remove it on condition that they still do
 * ({@link #neverHeld}). After a failed request we do not purge, we wait a whole poll interval. Granted, we purge
 * the expired entries ahead that did not keep us out, in the background ({@link Grant}).</li>
 * <li>Otherwise give up if the deadline has passed, else wait: until a same-JVM release or a heartbeat
 * hands us a fresh state, or until the next poll. The poll interval grows with our position (the minimum
 * times the rounds of grants ahead, {@link QueueState#roundsAhead}: an entry per exclusive lock, a run of shared entries
 * as one, N entries of a semaphore as one; capped at the maximum), so one waiter never polls more often than the
 * minimum allows, whatever the queue's length; and it never waits past the moment the entries ahead would
 * all have expired, so a dead holder is taken over one lease after its last heartbeat. A poll may come earlier
 * when the item's release history predicts the release that lets us hold, within a small budget of reads per
 * prediction ({@link #nextPoll}, {@link PredictivePolling}); a plain wake-up hint adds at most one read per
 * interval of the schedule.</li>
 * </ol>
 * The waiter removes our entry on every way out but a grant.
 */
final class WaitLoop {

    /**
     * How an acquisition's wait ended without a grant. {@code silent}: the fail-closed entries among those that kept
     * it out whose lease had run out unrenewed (they never expire: only a break removes them); {@code silentEnough}:
     * whether removing them would have let it in (else live entries keep it out as well).
     */
    record GaveUp(int position, List<String> ownersAhead, RuntimeException lastFailure, List<QueueState.Entry> silent,
            boolean silentEnough) {

        GaveUp withFailure(RuntimeException failure) {
            return new GaveUp(position, ownersAhead, failure, silent, silentEnough);
        }
    }

    /** What a waiter does next. */
    sealed interface Next {
    }

    /** Our entry is gone from the queue: purged or broken while we waited. */
    record Removed() implements Next {
    }

    /**
     * The entries ahead allow it: we hold the lock. {@code expired}: the expired entries ahead that did not keep us
     * out (a dead reader ahead of a reader, a dead holder of a semaphore with a permit left). No waiter would ever
     * purge them while everyone is let in beside them, and each enqueue pushes the item's TTL on, so the one granted
     * removes them, in the background, with the usual purge's conditions. None whose lease end no condition matches
     * (edited by hand), which only a break removes.
     */
    record Grant(List<QueueState.Entry> expired) implements Next {
    }

    /** Enough of what keeps us out has expired that removing it lets us hold: remove it. */
    record Purge(List<QueueState.Entry> stale) implements Next {
    }

    /**
     * A fail-closed entry ahead of ours lost its lease while {@code keepers} kept it out: it never held, and its
     * process is gone or cut off. Remove it if they still keep it out.
     */
    record PurgeNeverHeld(QueueState.Entry dead, List<QueueState.Entry> keepers) implements Next {
    }

    /** The deadline has passed with entries ahead. */
    record GiveUp(GaveUp gaveUp) implements Next {
    }

    /** Wait at most {@code delayNanos} before the next poll, unless a fresh state arrives first. */
    record Wait(long delayNanos) implements Next {
    }

    private final Duration minPoll;
    private final Duration maxPoll;
    private final boolean predictive;

    WaitLoop(Duration minPoll, Duration maxPoll) {
        this(minPoll, maxPoll, true);
    }

    /** @param predictive whether polls follow the release history (off when wake-up hints say when to read) */
    WaitLoop(Duration minPoll, Duration maxPoll, boolean predictive) {
        this.minPoll = minPoll;
        this.maxPoll = maxPoll;
        this.predictive = predictive;
    }

    /**
     * The next step of the waiter of entry {@code id}.
     *
     * @param failure the last poll's or purge's failure since the last good state, or {@code null}
     */
    Next decide(QueueState state, String id, RuntimeException failure, long nowMillis, long nowNanos,
            long deadlineNanos) {
        QueueState.Entry self = state.entry(id);
        if (self == null) {
            return new Removed();
        }
        QueueState.Blockers blockers = state.blockers(self);
        if (blockers.hold()) {
            return new Grant(state.ahead(self.ticket()).stream()
                    .filter(e -> e.isExpiredAt(nowMillis) && state.leaseEndMatchable(e)).toList());
        }
        // First, so that no purge lets a dead fail-closed entry in first: it would then stay until broken.
        PurgeNeverHeld neverHeld = failure == null ? neverHeld(state, self, nowMillis) : null;
        if (neverHeld != null) {
            return neverHeld;
        }
        List<QueueState.Entry> expired = blockers.entries().stream().filter(e -> e.isExpiredAt(nowMillis)).toList();
        if (failure == null && expired.size() >= blockers.mustLeave()) {
            return new Purge(expired);
        }
        if (nowNanos - deadlineNanos >= 0) {
            List<QueueState.Entry> ahead = state.ahead(self.ticket());
            List<QueueState.Entry> silent = blockers.entries().stream()
                    .filter(e -> e.failClosed() && e.expiresAtMillis() <= nowMillis).toList();
            return new GiveUp(new GaveUp(ahead.size(), ahead.stream().map(QueueState.Entry::owner).toList(), failure,
                    silent, silent.size() >= blockers.mustLeave()));
        }
        // Paced by the rounds of grants ahead, not the entries: readers ahead of a writer leave together.
        long delay = pollDelay(state.roundsAhead(self)).toNanos();
        // Look again as soon as enough of what keeps us out would have expired: a dead holder is taken over one
        // lease after its last heartbeat. After a failed request, wait a whole poll before the next. A
        // fail-closed entry never expires: if too few others can, poll at the usual pace.
        long[] expiries = blockers.entries().stream().filter(e -> !e.failClosed())
                .mapToLong(QueueState.Entry::expiresAtMillis).sorted().toArray();
        if (failure == null && expiries.length >= blockers.mustLeave()) {
            long enoughExpired = expiries[blockers.mustLeave() - 1];
            // Saturated: a lease end centuries ahead (an item edited by hand) must not overflow.
            delay = Math.min(delay, TimeUnit.MILLISECONDS.toNanos(Math.max(1, enoughExpired - nowMillis + 1)));
        }
        return new Wait(delay);
    }

    /**
     * The first fail-closed entry ahead of {@code self} whose lease has run out while the entries ahead of it keep it
     * out, with the fewest of those that keep it out by themselves: the last ones, which leave last. A fail-closed
     * entry that may have held (none ahead keeps it out) is never chosen, whatever its lease; nor one that needs
     * more keepers than one condition may name ({@link QueueTable#MAX_PURGE}, a semaphore of that many permits); nor
     * one of an item edited by hand that the rule can never let in.
     */
    static PurgeNeverHeld neverHeld(QueueState state, QueueState.Entry self, long nowMillis) {
        for (QueueState.Entry entry : state.ahead(self.ticket())) {
            if (!entry.failClosed() || entry.expiresAtMillis() > nowMillis) {
                continue;
            }
            QueueState.Blockers blockers = state.blockers(entry);
            // Not one that no number of leavers lets in (an unreadable ticket or permits): nothing proves it never
            // held.
            if (!blockers.hold() && blockers.mustLeave() <= blockers.entries().size()
                    && blockers.entries().size() - blockers.mustLeave() < QueueTable.MAX_PURGE) {
                // It holds once mustLeave of its blockers have left: while any size - mustLeave + 1 remain, it cannot.
                List<QueueState.Entry> keep = blockers.entries();
                return new PurgeNeverHeld(entry, keep.subList(blockers.mustLeave() - 1, keep.size()));
            }
        }
        return null;
    }

    /**
     * When the waiter of entry {@code id} polls next, the schedule's poll being due at {@code dueAt}: earlier, when
     * the release history in {@code state} predicts the release that lets it hold ({@link PredictivePolling}; its
     * position counted in rounds of grants, as the schedule counts it) and the waiter's {@code budget} allows, else
     * when due. Never later than the schedule.
     */
    PredictivePolling.Poll nextPoll(long dueAt, QueueState state, String id, PredictivePolling.Budget budget,
            long nowMillis, long nowNanos) {
        QueueState.Entry self = state.entry(id);
        if (!predictive || self == null) {
            return new PredictivePolling.Poll(dueAt, 0);
        }
        return PredictivePolling.nextPoll(dueAt, state.history(), state.roundsAhead(self), budget, nowMillis,
                nowNanos);
    }

    /** The pause between polls at {@code position} (rounds of grants ahead, {@link QueueState#roundsAhead}). */
    Duration pollDelay(int position) {
        Duration delay = minPoll.multipliedBy(Math.max(1, position));
        return delay.compareTo(maxPoll) > 0 ? maxPoll : delay;
    }
}
