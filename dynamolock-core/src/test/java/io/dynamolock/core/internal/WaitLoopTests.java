package io.dynamolock.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The rules of waiting, as the pure function each step of a waiter applies. */
class WaitLoopTests {

    private static final long NOW_MILLIS = 100_000;
    private static final long NOW = 5_000_000_000L;
    private static final long DEADLINE = NOW + Duration.ofSeconds(10).toNanos();
    private static final RuntimeException THROTTLED = new RuntimeException("throttled");

    private final WaitLoop rules = new WaitLoop(Duration.ofMillis(50), Duration.ofSeconds(1));

    @Test
    void pollDelayGrowsWithThePositionUpToTheMaximum() {
        assertThat(rules.pollDelay(0)).isEqualTo(Duration.ofMillis(50));
        assertThat(rules.pollDelay(1)).isEqualTo(Duration.ofMillis(50));
        assertThat(rules.pollDelay(4)).isEqualTo(Duration.ofMillis(200));
        assertThat(rules.pollDelay(100)).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void holdsWhenNothingIsAheadAndKnowsWhenItsEntryIsGone() {
        QueueState state = queue(entry("me", 7, NOW_MILLIS + 60_000), entry("later", 8, NOW_MILLIS + 60_000));
        assertThat(decide(state, null)).isInstanceOf(WaitLoop.Grant.class);
        assertThat(decide(queue(entry("other", 7, NOW_MILLIS + 60_000)), null)).isInstanceOf(WaitLoop.Removed.class);
    }

    @Test
    void purgesOnlyWhenEverythingAheadHasExpired() {
        QueueState.Entry dead = entry("dead", 5, NOW_MILLIS);
        QueueState.Entry alive = entry("alive", 6, NOW_MILLIS + 1);
        assertThat(decide(queue(dead, entry("me", 9, NOW_MILLIS + 60_000)), null))
                .isEqualTo(new WaitLoop.Purge(List.of(dead)));
        assertThat(decide(queue(dead, alive, entry("me", 9, NOW_MILLIS + 60_000)), null))
                .as("one live entry ahead: nothing is purged").isInstanceOf(WaitLoop.Wait.class);
    }

    @Test
    void neverPurgesAFailClosedEntryNorRightAfterAFailedRequest() {
        QueueState failClosed = queue(new QueueState.Entry("k", "pod", 5, NOW_MILLIS - 1, 60_000),
                entry("me", 9, NOW_MILLIS + 60_000));
        assertThat(decide(failClosed, null)).isEqualTo(new WaitLoop.Wait(Duration.ofMillis(50).toNanos()));
        QueueState dead = queue(entry("dead", 5, NOW_MILLIS - 1), entry("me", 9, NOW_MILLIS + 60_000));
        assertThat(decide(dead, THROTTLED)).as("a whole poll interval after a failure")
                .isEqualTo(new WaitLoop.Wait(Duration.ofMillis(50).toNanos()));
    }

    @Test
    void neverWaitsPastTheMomentEverythingAheadWouldHaveExpired() {
        QueueState ahead3 = queue(entry("a", 1, NOW_MILLIS + 30), entry("b", 2, NOW_MILLIS + 20),
                entry("c", 3, NOW_MILLIS + 10), entry("me", 9, NOW_MILLIS + 60_000));
        assertThat(decide(ahead3, null)).as("position 3 would poll after 150 ms; the last lease ends in 30")
                .isEqualTo(new WaitLoop.Wait(Duration.ofMillis(31).toNanos()));
        QueueState longLeases = queue(entry("a", 1, NOW_MILLIS + 60_000), entry("me", 9, NOW_MILLIS + 60_000));
        assertThat(decide(longLeases, null)).isEqualTo(new WaitLoop.Wait(Duration.ofMillis(50).toNanos()));
    }

    @Test
    void givesUpAtTheDeadlineWithWhatWasAheadAndTheLastFailure() {
        QueueState state = queue(entry("a", 1, NOW_MILLIS + 60_000), entry("me", 9, NOW_MILLIS + 60_000));
        WaitLoop.Next next = rules.decide(state, "me", THROTTLED, NOW_MILLIS, DEADLINE, DEADLINE);
        assertThat(next).isEqualTo(new WaitLoop.GiveUp(new WaitLoop.GaveUp(1, List.of("pod-a"), THROTTLED)));
        assertThat(rules.decide(state, "me", null, NOW_MILLIS, DEADLINE - 1, DEADLINE))
                .isInstanceOf(WaitLoop.Wait.class);
    }

    private WaitLoop.Next decide(QueueState state, RuntimeException failure) {
        return rules.decide(state, "me", failure, NOW_MILLIS, NOW, DEADLINE);
    }

    private static QueueState queue(QueueState.Entry... entries) {
        return new QueueState(100, 0, List.of(entries));
    }

    private static QueueState.Entry entry(String id, long ticket, long expiresAtMillis) {
        return new QueueState.Entry(id, id.equals("me") ? "pod-me" : "pod-a", ticket, expiresAtMillis, 0);
    }
}
