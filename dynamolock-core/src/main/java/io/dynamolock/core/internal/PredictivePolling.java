package io.dynamolock.core.internal;

import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Predictive polling: a waiter reads when the lock is likely free instead of only on a fixed schedule. Pure rules;
 * {@link Waiter} applies them.
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
 * Today's schedule stays: a poll is due one interval after the last (the minimum interval times the position,
 * capped, and never past the moment everything ahead would have expired). On top of it, the history predicts the
 * release that lets the waiter hold, {@code lr + position * ri} plus a small margin ({@link Prediction}). The
 * waiter reads then, if that is before the schedule's poll; if the lock is still held (the read came a little
 * early, the holder is a little late), it reads again a few times at short steps ({@link #FOLLOW_UPS}, an eighth
 * of the interval apart), then goes back to the schedule. A read at a prediction restarts the schedule, so the
 * schedule's polls never come more often than today's. The prediction's reads are the extra ones: at most
 * {@code 1 + FOLLOW_UPS} per prediction ({@link Budget}), and a new prediction needs a new history or a new
 * place in the queue, i.e. a release or an entry ahead leaving. So while the queue does not move (one holder
 * keeps the lock), a waiter sends at most {@code 1 + FOLLOW_UPS} requests more than today's schedule in all;
 * in a queue that moves, most waiters read once or twice, when their turn comes, instead of on every interval
 * of the schedule.
 *
 * <p>Nothing here decides a grant, and no poll comes later than today's schedule: a holder that holds far longer
 * than its history keeps its lease and the queue its order, and its waiters are back on today's schedule once the
 * prediction is an interval overdue. (Letting a waiter further back skip a schedule's poll to wait for its
 * predicted turn was tried and is worse: a late prediction makes the lock idle, which lengthens the measured
 * release interval, which makes the next predictions later still.)
 *
 * <p>With wake-up hints on, the hint says when to read (or grants outright), so predictions are not used there.
 */
final class PredictivePolling {

    static final String LAST_RELEASE = "lr";
    static final String RELEASE_INTERVAL = "ri";

    /** Reads after a predicted one that found the lock still held, before the waiter goes back to the schedule. */
    static final int FOLLOW_UPS = 3;

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
         * When the waiter {@code position} rounds of grants behind the holder can expect to hold, or {@code null}
         * if the history has nothing to say (none yet).
         */
        Prediction prediction(int position) {
            if (lastReleaseMillis == 0 || intervalMillis == 0 || position < 1) {
                return null;
            }
            return new Prediction(lastReleaseMillis + (long) position * intervalMillis + margin(),
                    Math.max(1, intervalMillis / 8), intervalMillis);
        }

        /** A little after the predicted release, so that the read more likely follows the release's write. */
        private long margin() {
            return Math.max(1, intervalMillis / 10);
        }
    }

    /**
     * A predicted release: read at {@code atMillis} (epoch ms); if the lock is still held, again every
     * {@code stepMillis}, while less than {@code lateMillis} late; within the {@link Budget}.
     */
    record Prediction(long atMillis, long stepMillis, long lateMillis) {
    }

    /** How many reads a waiter has spent on its current prediction: at most {@code 1 + FOLLOW_UPS}. */
    static final class Budget {

        private long prediction;
        private int spent;

        boolean allows(long predictedAtMillis) {
            return predictedAtMillis != prediction || spent <= FOLLOW_UPS;
        }

        void spend(long predictedAtMillis) {
            if (predictedAtMillis != prediction) {
                prediction = predictedAtMillis;
                spent = 0;
            }
            spent++;
        }
    }

    /** The next poll, at {@code atNanos}; {@code forPrediction} is the prediction it serves, 0 for the schedule. */
    record Poll(long atNanos, long forPrediction) {
    }

    /**
     * When to poll next: at the predicted release, or a step after it while the holder is a little late, if the
     * budget allows and that is before the schedule's poll at {@code dueAt}; else when due. {@code nowMillis} and
     * {@code nowNanos} are the same instant on the wall clock and the monotonic one.
     */
    static Poll nextPoll(long dueAt, History history, int position, Budget budget, long nowMillis, long nowNanos) {
        Prediction predicted = history.prediction(position);
        if (predicted != null && budget.allows(predicted.atMillis())
                && nowMillis - predicted.atMillis() < predicted.lateMillis()) {
            long waitMillis = predicted.atMillis() > nowMillis ? predicted.atMillis() - nowMillis
                    : predicted.stepMillis();
            long at = nowNanos + waitMillis * 1_000_000;
            if (at - dueAt < 0) {
                return new Poll(at, predicted.atMillis());
            }
        }
        return new Poll(dueAt, 0);
    }
}
