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
    void predictsTheReleaseThatLetsAWaiterHoldAndNothingOnceItIsOverdue() {
        PredictivePolling.History history = new PredictivePolling.History(NOW_MILLIS - 10, 30);
        assertThat(history.predictedMillis(1, NOW_MILLIS)).as("20 ms from now, plus a tenth of the interval")
                .isEqualTo(NOW_MILLIS + 23);
        assertThat(history.predictedMillis(2, NOW_MILLIS)).isEqualTo(NOW_MILLIS + 53);
        assertThat(history.predictedMillis(1, NOW_MILLIS + 23)).as("overdue: the holder holds longer").isZero();
        assertThat(PredictivePolling.History.NONE.predictedMillis(1, NOW_MILLIS)).isZero();
    }

    @Test
    void pollsEarlyInsideTheSlotForAPredictedReleaseAndNeverLater() {
        PredictivePolling.Slot slot = PredictivePolling.Slot.first(NOW, 50 * MS);
        PredictivePolling.History history = new PredictivePolling.History(NOW_MILLIS - 10, 30);
        assertThat(PredictivePolling.nextPoll(slot, history, 1, NOW_MILLIS, NOW)).isEqualTo(NOW + 23 * MS);
        assertThat(PredictivePolling.nextPoll(slot, history, 3, NOW_MILLIS, NOW))
                .as("predicted past the slot: when due, as today").isEqualTo(NOW + 50 * MS);
        assertThat(PredictivePolling.nextPoll(slot, new PredictivePolling.History(NOW_MILLIS - 100, 30), 1,
                NOW_MILLIS, NOW)).as("overdue: when due, as today").isEqualTo(NOW + 50 * MS);
        assertThat(PredictivePolling.nextPoll(slot, PredictivePolling.History.NONE, 1, NOW_MILLIS, NOW))
                .isEqualTo(NOW + 50 * MS);
    }

    @Test
    void anEarlyPollUsesUpItsSlot() {
        PredictivePolling.Slot slot = PredictivePolling.Slot.first(NOW, 50 * MS);
        PredictivePolling.Slot afterEarly = slot.after(NOW + 10 * MS, 50 * MS);
        assertThat(afterEarly).isEqualTo(new PredictivePolling.Slot(NOW + 50 * MS, NOW + 100 * MS));
        assertThat(afterEarly.pollAt(NOW + 11 * MS)).as("a second wish in the same stretch waits for the next slot")
                .isEqualTo(NOW + 50 * MS + 1);
        assertThat(slot.after(NOW + 60 * MS, 50 * MS)).as("on time or late: as today")
                .isEqualTo(new PredictivePolling.Slot(NOW + 60 * MS, NOW + 110 * MS));
        assertThat(slot.dueNoLaterThan(NOW + 20 * MS).dueAt()).isEqualTo(NOW + 20 * MS);
        assertThat(slot.dueNoLaterThan(NOW + 70 * MS)).isSameAs(slot);
    }

    /**
     * A waiter at {@code position} for ten seconds, with a wish to poll early (a prediction, a hint, a flood of
     * forged ones) at random moments, sometimes many per millisecond: it never polls more than once more than
     * today's schedule would in that time, at queues of 1, 10 and 100.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 10, 100})
    void neverPollsMoreOftenThanTodaysSchedule(int position) {
        long delay = today.pollDelay(position).toNanos();
        long span = Duration.ofSeconds(10).toNanos();
        long todays = span / delay;
        Random random = new Random(position);
        for (int run = 0; run < 50; run++) {
            long now = NOW;
            PredictivePolling.Slot slot = PredictivePolling.Slot.first(now, delay);
            int polls = 0;
            while (true) {
                long wish = run % 5 == 0 ? now : now + (long) (random.nextDouble() * 2 * delay);
                long pollAt = Math.max(now, slot.pollAt(wish));
                if (pollAt - NOW > span) {
                    break;
                }
                polls++;
                now = pollAt;
                slot = slot.after(now, delay);
            }
            assertThat(polls).as("run %d at position %d", run, position).isLessThanOrEqualTo((int) todays + 1);
        }
    }
}
