package io.dynamolock.core.internal;

import io.dynamolock.core.DynamoLockException;
import io.dynamolock.core.LockLostException;
import io.dynamolock.core.LockTableException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import java.util.concurrent.locks.LockSupport;

/**
 * The waiting of one acquisition, from its enqueue response to a grant or a give-up.
 *
 * <ol>
 * <li>Look at the latest queue state: if no entry is ahead of ours, we hold the lock.</li>
 * <li>If entries are ahead but every one has expired by our clock, purge them (each only if not
 * renewed since) and look again at the state the purge returns. A fail-closed entry never expires: behind
 * one, we only wait.</li>
 * <li>Otherwise wait, unless there is no time left: until a same-JVM release or a heartbeat hands us a
 * fresh state, or until the next poll. The poll interval grows with our position (the minimum times
 * the number of entries ahead, capped at the maximum), so one waiter never polls more often than the
 * minimum allows, whatever the queue's length; and it never sleeps past the moment the entries ahead would all have expired, so a
 * dead holder is taken over one lease after its last heartbeat.</li>
 * </ol>
 * The caller removes our entry on every way out but a grant.
 */
final class WaitLoop {

    private static final Logger log = LoggerFactory.getLogger(WaitLoop.class);

    /** How an acquisition's wait ended without a grant. */
    record GaveUp(int position, List<String> ownersAhead, RuntimeException lastFailure) {
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
     * @throws LockLostException    if the entry's lease ended, or it was purged, while it waited
     * @throws DynamoLockException  if the template was closed while it waited
     */
    GaveUp await(Acquisition entry, QueueState initial, long deadlineNanos, BooleanSupplier closed)
            throws InterruptedException {
        QueueState state = initial;
        long nextPollAt = System.nanoTime();
        boolean polled = true;
        RuntimeException failure = null;
        while (true) {
            if (entry.phase() == Acquisition.Phase.LOST) {
                throw lost(entry, entry.lostReason());
            }
            if (closed.getAsBoolean()) {
                throw new DynamoLockException("The LockTemplate was closed while waiting for " + entry.key());
            }
            QueueState.Entry self = state.entry(entry.id());
            if (self == null) {
                // Only our own requests' answers count here: a state handed over by another thread may
                // predate our enqueue.
                throw lost(entry, "the queue entry was removed while waiting: purged after it expired (was this"
                        + " JVM paused past the lease?) or broken by an operator");
            }
            List<QueueState.Entry> ahead = state.ahead(self.ticket());
            if (ahead.isEmpty()) {
                return null;
            }
            long nowMillis = clock.millis();
            boolean allExpired = ahead.stream().allMatch(e -> e.isExpiredAt(nowMillis));
            if (allExpired && failure == null) {
                Attempt purge = attempt(entry, () -> table.purge(entry.key(), entry.id(), ahead));
                if (purge.failure() == null) {
                    state = purge.state();
                    handoff.publish(entry.key(), state);
                    continue;
                }
                failure = purge.failure();
                polled = true;
            }
            long now = System.nanoTime();
            if (now - deadlineNanos >= 0) {
                return new GaveUp(ahead.size(), ahead.stream().map(QueueState.Entry::owner).toList(), failure);
            }
            long delay = pollDelay(ahead.size()).toNanos();
            if (failure == null && ahead.stream().noneMatch(QueueState.Entry::failClosed)) {
                // Look again as soon as everything ahead would have expired: a dead holder is taken over one
                // lease after its last heartbeat. After a failed request, wait a whole poll before the next.
                // A fail-closed entry ahead never expires: poll behind it at the usual pace.
                long lastExpiry = ahead.stream().mapToLong(QueueState.Entry::expiresAtMillis).max().orElse(nowMillis);
                delay = Math.min(delay, Duration.ofMillis(Math.max(1, lastExpiry - nowMillis + 1)).toNanos());
            }
            nextPollAt = polled ? now + delay : Waits.earlier(nextPollAt, now + delay);
            polled = false;
            QueueState offered = park(entry, Waits.earlier(nextPollAt, deadlineNanos), closed);
            if (offered != null) {
                if (offered.entry(entry.id()) != null) {
                    state = offered;
                    failure = null;
                }
            }
            else if (System.nanoTime() - nextPollAt >= 0 && entry.isLive()) {
                Attempt read = attempt(entry, () -> table.read(entry.key()));
                state = read.failure() == null ? read.state() : state;
                failure = read.failure();
                polled = true;
            }
        }
    }

    /** A poll's or purge's answer, or why there is none. */
    private record Attempt(QueueState state, RuntimeException failure) {
    }

    /**
     * One poll or purge. A failure (throttling, a timeout) is not the end of the wait: the waiter keeps its
     * place, its heartbeats keep its lease, and it tries again after a poll interval, until its deadline.
     * A missing or wrong table ends the wait at once.
     */
    private static Attempt attempt(Acquisition entry, Supplier<QueueState> request) throws InterruptedException {
        try {
            return new Attempt(request.get(), null);
        }
        catch (LockTableException ex) {
            throw ex;
        }
        catch (RuntimeException ex) {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            log.warn("Waiting for {}: a request failed; trying again after a poll interval", entry, ex);
            return new Attempt(null, ex);
        }
    }

    /** The pause between polls at {@code position} (entries ahead). */
    Duration pollDelay(int position) {
        Duration delay = minPoll.multipliedBy(Math.max(1, position));
        return delay.compareTo(maxPoll) > 0 ? maxPoll : delay;
    }

    /** Parks until {@code untilNanos} or a wake-up; returns an offered state, if any. */
    private static QueueState park(Acquisition entry, long untilNanos, BooleanSupplier closed)
            throws InterruptedException {
        while (true) {
            QueueState offered = entry.takeOffered();
            if (offered != null) {
                return offered;
            }
            long remaining = untilNanos - System.nanoTime();
            if (remaining <= 0 || entry.phase() == Acquisition.Phase.LOST || closed.getAsBoolean()) {
                return null;
            }
            LockSupport.parkNanos(entry, remaining);
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
        }
    }

    private static LockLostException lost(Acquisition entry, String reason) {
        return new LockLostException("Lost the place in the queue of " + entry.key() + " while waiting: " + reason);
    }
}
