package io.dynamolock.core.internal;

import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Predictive polling: a waiter reads when the lock is likely free instead of only on a fixed schedule, without
 * polling more often than the fixed schedule allows. Pure rules; {@link Waiter} applies them.
 *
 * <h2>What the item remembers</h2>
 * A release writes the item anyway, so in the same request it records, at no extra cost:
 * <pre>
 * lr  N  the last release, the releaser's epoch ms
 * ri  N  a moving average (EWMA, 1/4 weight to the newest) of the release interval in ms: from the moment the
 *        releaser could take the lock (the release before it, or its own enqueue if later) to its release,
 *        i.e. the hand-over plus the hold
 * </pre>
 * The grant itself writes nothing (a waiter takes the lock when a read shows it first), so the item cannot say
 * when its holder started; the previous release, or the holder's enqueue after an idle lock, is when it could.
 * A sample far above the average counts as four times the average, so one very long hold does not make the
 * next waiters poll late for a long time, and the average still follows a lasting change within a few releases.
 *
 * <h2>When a waiter polls</h2>
 * {@link Slot}: today's schedule (the minimum interval times the position, capped, and never past the moment
 * everything ahead would have expired) gives each poll a slot that ends when the poll is due. A poll may come
 * earlier inside its slot, when the history predicts the release that lets the waiter hold ({@code lr + position
 * * ri}, plus a small margin); it then uses up that slot, and the next is due one interval after the end of this
 * one. (A plain wake-up hint adds at most one read per slot besides, without moving the schedule: see
 * {@link Waiter}; with hints on, the slots are four times longer.) So polls never come more often than one per slot, the
 * slots are today's, and a waiter sends at most one request more than today's schedule in any stretch of time.
 * A prediction in the past (the holder holds longer than its history) or past the slot's end changes nothing:
 * the waiter polls on today's schedule. Nothing here decides a grant, and no poll comes later than today's, so
 * a holder that holds far longer than its history keeps its lease and the queue its order.
 */
final class PredictivePolling {

    static final String LAST_RELEASE = "lr";
    static final String RELEASE_INTERVAL = "ri";

    private PredictivePolling() {
    }

    /** The release history as the item holds it; zeros when it has none. */
    record History(long lastReleaseMillis, long intervalMillis) {

        static final History NONE = new History(0, 0);

        static History of(Map<String, AttributeValue> item) {
            if (item == null) {
                return NONE;
            }
            return new History(number(item.get(LAST_RELEASE)), number(item.get(RELEASE_INTERVAL)));
        }

        private static long number(AttributeValue value) {
            try {
                return value == null || value.n() == null ? 0 : Math.max(0, Long.parseLong(value.n()));
            }
            catch (NumberFormatException notALong) {
                return 0; // written by something else: no history
            }
        }

        /**
         * The history a release at {@code nowMillis} writes, by a holder that enqueued at {@code enqueuedAtMillis}
         * and last saw this history.
         */
        History afterRelease(long enqueuedAtMillis, long nowMillis) {
            long sample = nowMillis - Math.max(lastReleaseMillis, enqueuedAtMillis);
            if (sample < 0) {
                return new History(nowMillis, intervalMillis); // clocks disagree: keep the average
            }
            if (intervalMillis == 0) {
                return new History(nowMillis, Math.max(1, sample));
            }
            long bounded = Math.min(sample, 4 * intervalMillis);
            return new History(nowMillis, Math.max(1, (3 * intervalMillis + bounded + 2) / 4));
        }

        /**
         * When the waiter {@code position} entries behind the holder can expect to hold, in epoch ms, or 0 if the
         * history has nothing to say (none yet, or the expected time has passed: the holder is late).
         */
        long predictedMillis(int position, long nowMillis) {
            if (lastReleaseMillis == 0 || intervalMillis == 0 || position < 1) {
                return 0;
            }
            long predicted = lastReleaseMillis + (long) position * intervalMillis + margin();
            return predicted > nowMillis ? predicted : 0;
        }

        /** A little after the predicted release, so that the read more likely follows the release's write. */
        private long margin() {
            return Math.max(1, intervalMillis / 10);
        }
    }

    /**
     * A poll's slot, on the {@link System#nanoTime()} scale: the poll is due at {@code dueAt} and may come
     * earlier, but after {@code opensAt}.
     */
    record Slot(long opensAt, long dueAt) {

        /** The first slot after a request at {@code sentAt}: due one interval later, as today. */
        static Slot first(long sentAt, long delayNanos) {
            return new Slot(sentAt, sentAt + delayNanos);
        }

        /**
         * The slot after a poll at {@code polledAt}: one interval after this slot's end if the poll came early
         * (it used up this slot), else one interval after the poll, as today.
         */
        Slot after(long polledAt, long delayNanos) {
            return polledAt - dueAt >= 0 ? new Slot(polledAt, polledAt + delayNanos)
                    : new Slot(dueAt, dueAt + delayNanos);
        }

        /** This slot due no later than {@code latest}: a fresh state may bring today's next poll forward. */
        Slot dueNoLaterThan(long latest) {
            return latest - dueAt < 0 ? new Slot(Math.min(opensAt, latest), latest) : this;
        }

        /**
         * When to poll if the waiter would like to at {@code wanted} (a predicted release):
         * then, if inside the slot; at the slot's opening if earlier (never two polls in one slot); when due if
         * later.
         */
        long pollAt(long wanted) {
            if (wanted - dueAt >= 0) {
                return dueAt;
            }
            return wanted - opensAt > 0 ? wanted : opensAt + 1;
        }
    }

    /**
     * When to poll next: early in the slot for a predicted release, else when due. {@code nowMillis} and
     * {@code nowNanos} are the same instant on the wall clock and the monotonic one.
     */
    static long nextPoll(Slot slot, History history, int position, long nowMillis, long nowNanos) {
        long predicted = history.predictedMillis(position, nowMillis);
        if (predicted == 0) {
            return slot.dueAt();
        }
        long wanted = nowNanos + (predicted - nowMillis) * 1_000_000;
        return Math.max(nowNanos, slot.pollAt(wanted));
    }
}
