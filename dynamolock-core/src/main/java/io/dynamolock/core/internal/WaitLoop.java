package io.dynamolock.core.internal;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.concurrent.locks.LockSupport;

/**
 * The waiting of one acquisition, from its enqueue response to a grant or a give-up.
 *
 * <ol>
 * <li>Look at the latest queue state: if no entry is ahead of ours, we hold the lock, provided our lease
 * has not run out since (else renew it first: the answer says whether the entry is still ours).</li>
 * <li>If entries are ahead but every one has expired by our clock, purge them (each only if not
 * renewed since) and look again at the state the purge returns.</li>
 * <li>Otherwise wait, unless there is no time left: until a same-JVM release or a heartbeat hands us a
 * fresh state, or until the next poll. The poll interval grows with our position (the minimum times
 * the number of entries ahead, capped at the maximum), so a queue of any length costs about as much
 * as a short one; and it never sleeps past the moment the entries ahead would all have expired, so a
 * dead holder is taken over one lease after its last heartbeat.</li>
 * </ol>
 * The caller removes our entry on every way out but a grant.
 */
final class WaitLoop {

    /** How an acquisition's wait ended without a grant. */
    record GaveUp(int position, List<String> ownersAhead) {
    }

    private final QueueTable table;
    private final Clock clock;
    private final Handoff handoff;
    private final Duration minPoll;
    private final Duration maxPoll;

    WaitLoop(QueueTable table, Clock clock, Handoff handoff, Duration minPoll, Duration maxPoll) {
        this.table = table;
        this.clock = clock;
        this.handoff = handoff;
        this.minPoll = minPoll;
        this.maxPoll = maxPoll;
    }

    /**
     * Waits until {@code entry} holds the lock ({@code null}) or the deadline passes (what was ahead).
     *
     * @throws InterruptedException if the thread is interrupted
     * @throws EntryLostException   if the entry was purged while it waited
     */
    GaveUp await(QueueEntry entry, QueueState initial, long deadlineNanos, BooleanSupplier closed)
            throws InterruptedException {
        QueueState state = initial;
        long nextPollAt = System.nanoTime();
        boolean polled = true;
        while (true) {
            if (entry.phase() == QueueEntry.Phase.LOST) {
                throw new EntryLostException(entry.lostReason());
            }
            if (closed.getAsBoolean()) {
                throw new TemplateClosedException();
            }
            QueueState.Entry self = state.entry(entry.owner());
            if (self == null) {
                // Only our own requests' answers count here: a state handed over by another thread may
                // predate our enqueue.
                throw new EntryLostException("the queue entry expired and was purged while waiting;"
                        + " was this JVM paused past the lease?");
            }
            List<QueueState.Entry> ahead = state.ahead(self.ticket());
            if (ahead.isEmpty()) {
                if (System.nanoTime() - entry.confirmedUntilNanos() < 0) {
                    return null;
                }
                // The lease ran out since this state was read (the JVM stopped, an answer came late): others may
                // have purged the entry and taken the lock. Renew it first; the answer says whether it is still ours.
                long sentAt = System.nanoTime();
                state = table.renew(entry.key(), entry.owner(), clock.millis(), entry.lease());
                if (state.entry(entry.owner()) != null) {
                    entry.renewed(sentAt);
                }
                continue;
            }
            long nowMillis = clock.millis();
            if (ahead.stream().allMatch(e -> e.isExpiredAt(nowMillis))) {
                state = table.purge(entry.key(), entry.owner(), ahead);
                handoff.publish(entry.key(), state);
                continue;
            }
            long now = System.nanoTime();
            if (now - deadlineNanos >= 0) {
                return new GaveUp(ahead.size(), ahead.stream().map(QueueState.Entry::owner).toList());
            }
            long lastExpiry = ahead.stream().mapToLong(QueueState.Entry::expiresAtMillis).max().orElse(nowMillis);
            long untilAllExpired = Duration.ofMillis(Math.max(1, lastExpiry - nowMillis + 1)).toNanos();
            long delay = Math.min(pollDelay(ahead.size()).toNanos(), untilAllExpired);
            nextPollAt = polled ? now + delay : Math.min(nextPollAt, now + delay);
            polled = false;
            QueueState offered = park(entry, Math.min(nextPollAt, deadlineNanos), closed);
            if (offered != null) {
                if (offered.entry(entry.owner()) != null) {
                    state = offered;
                }
            }
            else if (System.nanoTime() - nextPollAt >= 0 && entry.isLive()) {
                state = table.read(entry.key());
                polled = true;
            }
        }
    }

    /** The pause between polls at {@code position} (entries ahead). */
    Duration pollDelay(int position) {
        Duration delay = minPoll.multipliedBy(Math.max(1, position));
        return delay.compareTo(maxPoll) > 0 ? maxPoll : delay;
    }

    /** Parks until {@code untilNanos} or a wake-up; returns an offered state, if any. */
    private static QueueState park(QueueEntry entry, long untilNanos, BooleanSupplier closed)
            throws InterruptedException {
        while (true) {
            QueueState offered = entry.takeOffered();
            if (offered != null) {
                return offered;
            }
            long remaining = untilNanos - System.nanoTime();
            if (remaining <= 0 || entry.phase() == QueueEntry.Phase.LOST || closed.getAsBoolean()) {
                return null;
            }
            LockSupport.parkNanos(entry, remaining);
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
        }
    }

    /** The entry is gone from the queue while its owner waited. */
    static final class EntryLostException extends RuntimeException {
        EntryLostException(String message) {
            super(message, null, false, false);
        }
    }

    /** The template closed while its owner waited. */
    static final class TemplateClosedException extends RuntimeException {
        TemplateClosedException() {
            super("closed", null, false, false);
        }
    }
}
