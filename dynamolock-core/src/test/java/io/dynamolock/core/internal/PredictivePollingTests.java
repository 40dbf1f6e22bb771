package io.dynamolock.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/** Predictive polling: when a waiter reads, and that it never reads more often than the fixed schedule. */
class PredictivePollingTests {

    private static final long MS = 1_000_000;
    private static final long NOW_MILLIS = 1_800_000_000_000L;
    private static final long NOW = 5_000_000_000L;
    private final WaitLoop today = new WaitLoop(Duration.ofMillis(50), Duration.ofSeconds(1));

    @Test
    void theHistoryIsAMovingAverageOfReleaseIntervalsWithLongHoldsBounded() {
        PredictivePolling.History none = PredictivePolling.History.of(Map.of());
        assertThat(none).isEqualTo(PredictivePolling.History.NONE);

        PredictivePolling.History first = none.afterRelease(NOW_MILLIS - 20, NOW_MILLIS);
        assertThat(first).isEqualTo(new PredictivePolling.History(NOW_MILLIS, 20));

        PredictivePolling.History contended = first.afterRelease(NOW_MILLIS - 1000, NOW_MILLIS + 40);
        assertThat(contended).as("queued before the last release: from that release on, (3 * 20 + 40) / 4")
                .isEqualTo(new PredictivePolling.History(NOW_MILLIS + 40, 25));

        PredictivePolling.History afterIdle = contended.afterRelease(NOW_MILLIS + 10_000, NOW_MILLIS + 10_020);
        assertThat(afterIdle.intervalMillis()).as("enqueued after an idle spell: from its enqueue").isEqualTo(24);

        PredictivePolling.History longHold = afterIdle.afterRelease(NOW_MILLIS + 10_020, NOW_MILLIS + 3_600_000);
        assertThat(longHold.intervalMillis()).as("an hour-long hold counts as four times the average")
                .isEqualTo((3 * 24 + 4 * 24 + 2) / 4);

        assertThat(first.afterRelease(NOW_MILLIS + 5, NOW_MILLIS - 5)).as("a clock behind the last release")
                .isEqualTo(new PredictivePolling.History(NOW_MILLIS - 5, 20));
    }

    @Test
    void readsTheHistoryFromTheItemAndIgnoresWhatIsNotANumber() {
        assertThat(PredictivePolling.History.of(Map.of("lr", AttributeValue.fromN("17"), "ri", AttributeValue.fromN("3"))))
                .isEqualTo(new PredictivePolling.History(17, 3));
        assertThat(PredictivePolling.History.of(Map.of("lr", AttributeValue.fromN("1.5"), "ri", AttributeValue.fromS("x"))))
                .isEqualTo(PredictivePolling.History.NONE);
    }

    @Test
    void predictsTheReleaseThatLetsAWaiterHold() {
        PredictivePolling.History history = new PredictivePolling.History(NOW_MILLIS - 10, 32);
        assertThat(history.prediction(1)).as("22 ms from now plus a tenth of the interval; steps of an eighth")
                .isEqualTo(new PredictivePolling.Prediction(NOW_MILLIS + 25, 4, 32));
        assertThat(history.prediction(2).atMillis()).isEqualTo(NOW_MILLIS + 57);
        assertThat(PredictivePolling.History.NONE.prediction(1)).isNull();
        assertThat(history.prediction(0)).as("no one ahead: nothing to predict").isNull();
    }

    @Test
    void readsAtThePredictedReleaseThenAFewTimesMoreWhileTheHolderIsLateThenOnTheSchedule() {
        PredictivePolling.History history = new PredictivePolling.History(NOW_MILLIS - 10, 32);
        PredictivePolling.Budget budget = new PredictivePolling.Budget();
        long due = NOW + 50 * MS;
        PredictivePolling.Poll first = PredictivePolling.nextPoll(due, history, 1, budget, NOW_MILLIS, NOW);
        assertThat(first).isEqualTo(new PredictivePolling.Poll(NOW + 25 * MS, NOW_MILLIS + 25));

        long millis = NOW_MILLIS + 25;
        long nanos = NOW + 25 * MS;
        budget.spend(first.forPrediction());
        for (int followUp = 1; followUp <= PredictivePolling.FOLLOW_UPS; followUp++) {
            PredictivePolling.Poll next = PredictivePolling.nextPoll(nanos + 50 * MS, history, 1, budget,
                    millis, nanos);
            assertThat(next).as("follow-up %d: a step later", followUp)
                    .isEqualTo(new PredictivePolling.Poll(nanos + 4 * MS, NOW_MILLIS + 25));
            budget.spend(next.forPrediction());
            millis += 4;
            nanos += 4 * MS;
        }
        assertThat(PredictivePolling.nextPoll(nanos + 50 * MS, history, 1, budget, millis, nanos))
                .as("budget spent: the schedule").isEqualTo(new PredictivePolling.Poll(nanos + 50 * MS, 0));

        PredictivePolling.History released = new PredictivePolling.History(millis, 32);
        assertThat(PredictivePolling.nextPoll(nanos + 50 * MS, released, 1, budget, millis, nanos).forPrediction())
                .as("a release since: a new prediction, a new budget").isEqualTo(millis + 35);
    }

    @Test
    void notLaterThanTheScheduleAndNothingForAHolderFarPastItsHistory() {
        PredictivePolling.Budget budget = new PredictivePolling.Budget();
        long due = NOW + 50 * MS;
        assertThat(PredictivePolling.nextPoll(due, new PredictivePolling.History(NOW_MILLIS - 10, 30), 3,
                budget, NOW_MILLIS, NOW)).as("predicted past the schedule's poll: when due")
                .isEqualTo(new PredictivePolling.Poll(due, 0));
        assertThat(PredictivePolling.nextPoll(due, new PredictivePolling.History(NOW_MILLIS - 100, 30), 1,
                budget, NOW_MILLIS, NOW)).as("late by more than an interval: as today")
                .isEqualTo(new PredictivePolling.Poll(due, 0));
        assertThat(PredictivePolling.nextPoll(due, PredictivePolling.History.NONE, 1, budget, NOW_MILLIS, NOW))
                .isEqualTo(new PredictivePolling.Poll(due, 0));

        // The holder h released 10 ms ago by its history; w waits behind it.
        QueueState queue = QueueState.of(Map.of("next", AttributeValue.fromN("3"),
                "t#h", AttributeValue.fromN("1"), "e#h", AttributeValue.fromN(Long.toString(NOW_MILLIS + 60_000)),
                "t#w", AttributeValue.fromN("2"), "e#w", AttributeValue.fromN(Long.toString(NOW_MILLIS + 60_000)),
                "lr", AttributeValue.fromN(Long.toString(NOW_MILLIS - 10)), "ri", AttributeValue.fromN("30")));
        assertThat(today.nextPoll(due, queue, "w", budget, NOW_MILLIS, NOW))
                .isEqualTo(new PredictivePolling.Poll(NOW + 23 * MS, NOW_MILLIS + 23));
        assertThat(new WaitLoop(Duration.ofMillis(50), Duration.ofSeconds(1), false).nextPoll(due, queue,
                "w", budget, NOW_MILLIS, NOW)).as("with wake-up hints on, no prediction")
                .isEqualTo(new PredictivePolling.Poll(due, 0));
    }

    /**
     * A waiter at {@code position} for ten seconds behind a holder that keeps the lock, with a recent release
     * history, woken at random moments (a flood of wake-ups, sometimes many per millisecond): it never polls more
     * than the budget of one prediction more than today's schedule would in that time, at queues of 1, 10 and
     * 100.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 10, 100})
    void neverPollsMoreThanOnePredictionsBudgetMoreThanTodaysScheduleWhileTheQueueDoesNotMove(int position) {
        long delay = today.pollDelay(position).toNanos();
        long span = Duration.ofSeconds(10).toNanos();
        long todays = span / delay;
        Random random = new Random(position);
        for (int run = 0; run < 50; run++) {
            PredictivePolling.History history = new PredictivePolling.History(NOW_MILLIS - random.nextInt(40),
                    1 + random.nextInt(60));
            PredictivePolling.Budget budget = new PredictivePolling.Budget();
            long now = NOW;
            long dueAt = now + delay;
            PredictivePolling.Poll next = PredictivePolling.nextPoll(dueAt, history, position, budget, NOW_MILLIS, now);
            int polls = 0;
            while (true) {
                // Woken before the poll, now and then several times (a flood of events): each takes a fresh look.
                for (int wakeUp = random.nextInt(run % 5 == 0 ? 20 : 3); wakeUp > 0; wakeUp--) {
                    long woken = now + (long) (random.nextDouble() * (next.atNanos() - now));
                    PredictivePolling.Poll again = PredictivePolling.nextPoll(dueAt, history,
                            position, budget, NOW_MILLIS + (woken - NOW) / MS, woken);
                    if (again.atNanos() - next.atNanos() < 0) {
                        next = again;
                    }
                    now = woken;
                }
                if (next.atNanos() - NOW > span) {
                    break;
                }
                polls++;
                now = next.atNanos();
                if (next.forPrediction() != 0) {
                    budget.spend(next.forPrediction());
                }
                dueAt = now + delay;
                next = PredictivePolling.nextPoll(dueAt, history, position, budget,
                        NOW_MILLIS + (now - NOW) / MS, now);
            }
            assertThat(polls).as("run %d at position %d", run, position)
                    .isLessThanOrEqualTo((int) todays + 1 + PredictivePolling.FOLLOW_UPS);
        }
    }
}
