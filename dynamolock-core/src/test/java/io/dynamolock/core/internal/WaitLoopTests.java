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
        assertThat(next).isEqualTo(new WaitLoop.GiveUp(new WaitLoop.GaveUp(1, List.of("pod-a"), THROTTLED, List.of(), false)));
        assertThat(rules.decide(state, "me", null, NOW_MILLIS, DEADLINE - 1, DEADLINE))
                .isInstanceOf(WaitLoop.Wait.class);
    }

    @Test
    void aSharedEntryHoldsWhenEveryEntryAheadIsSharedAndAnExclusiveOneWhenNoneIs() {
        QueueState.Entry reader1 = shared("r1", 1, NOW_MILLIS + 60_000);
        QueueState.Entry reader2 = shared("r2", 2, NOW_MILLIS + 60_000);
        QueueState.Entry writer = entry("w", 3, NOW_MILLIS + 60_000);
        assertThat(decide(queue(reader1, reader2, shared("me", 9, NOW_MILLIS + 60_000)), null))
                .as("readers only ahead").isInstanceOf(WaitLoop.Grant.class);
        assertThat(decide(queue(reader1, reader2, entry("me", 9, NOW_MILLIS + 60_000)), null))
                .as("a writer behind readers waits for them").isInstanceOf(WaitLoop.Wait.class);
        assertThat(decide(queue(reader1, writer, shared("me", 9, NOW_MILLIS + 60_000)), null))
                .as("a reader behind a waiting writer waits for it: no writer starves").isInstanceOf(WaitLoop.Wait.class);
        assertThat(decide(queue(reader1, shared("me", 2, NOW_MILLIS + 60_000), writer), null))
                .as("a reader ahead of a waiting writer holds: queue order is ticket order").isInstanceOf(WaitLoop.Grant.class);
    }

    /**
     * A grant lists the expired entries ahead that did not keep it out (a dead reader beside readers, a dead holder
     * of a semaphore with a permit left): nobody else would purge them while every caller is let in at once.
     * Neither a fail-closed entry (never purged that way), nor a live one, nor one behind is listed.
     */
    @Test
    void aGrantListsTheExpiredEntriesAheadThatDidNotKeepItOut() {
        QueueState.Entry deadReader = shared("dead", 1, NOW_MILLIS);
        QueueState.Entry silentReader = new QueueState.Entry("k", "pod", 2, NOW_MILLIS - 1, 60_000, true);
        QueueState.Entry liveReader = shared("live", 3, NOW_MILLIS + 1);
        QueueState.Entry deadBehind = shared("behind", 10, NOW_MILLIS);
        assertThat(decide(queue(deadReader, silentReader, liveReader, shared("me", 9, NOW_MILLIS + 60_000),
                deadBehind), null)).isEqualTo(new WaitLoop.Grant(List.of(deadReader)));
        QueueState.Entry deadHolder = entry("a", 1, NOW_MILLIS - 5);
        assertThat(decide(semaphore(3, List.of(deadHolder, entry("b", 2, NOW_MILLIS + 60_000)),
                entry("me", 9, NOW_MILLIS + 60_000)), null)).isEqualTo(new WaitLoop.Grant(List.of(deadHolder)));
        assertThat(decide(queue(entry("me", 9, NOW_MILLIS + 60_000)), null))
                .as("nothing ahead: nothing to purge").isEqualTo(new WaitLoop.Grant(List.of()));
    }

    @Test
    void aSemaphoreEntryHoldsWhenFewerThanItsPermitsAreAhead() {
        List<QueueState.Entry> ahead = List.of(entry("a", 1, NOW_MILLIS + 60_000), entry("b", 2, NOW_MILLIS + 60_000));
        assertThat(decide(semaphore(3, ahead, entry("me", 9, NOW_MILLIS + 60_000)), null))
                .as("2 ahead, 3 permits").isInstanceOf(WaitLoop.Grant.class);
        assertThat(decide(semaphore(2, ahead, entry("me", 9, NOW_MILLIS + 60_000)), null))
                .as("2 ahead, 2 permits").isInstanceOf(WaitLoop.Wait.class);
    }

    @Test
    void theRuleIsMonotoneSoAStateThatLetsAnEntryHoldStillDoesWithFewerEntriesAhead() {
        // Entries ahead of a ticket only disappear: a grant read from any state must survive every removal.
        List<QueueState.Entry> ahead = List.of(shared("a", 1, NOW_MILLIS + 60_000), shared("b", 2, NOW_MILLIS + 60_000),
                entry("c", 3, NOW_MILLIS + 60_000), shared("d", 4, NOW_MILLIS + 60_000));
        List<QueueState.Entry> exclusiveOnly = ahead.stream()
                .map(e -> new QueueState.Entry(e.id(), e.owner(), e.ticket(), e.expiresAtMillis(), 0)).toList();
        for (int permits = 1; permits <= 4; permits++) {
            // Shared entries exist only on items of one permit: a request for both is refused.
            List<QueueState.Entry> pool = permits == 1 ? ahead : exclusiveOnly;
            for (boolean selfShared : new boolean[] {false, true}) {
                if (selfShared && permits > 1) {
                    continue;
                }
                QueueState.Entry me = selfShared ? shared("me", 9, NOW_MILLIS + 60_000) : entry("me", 9, NOW_MILLIS + 60_000);
                for (int mask = 0; mask < 1 << pool.size(); mask++) {
                    List<QueueState.Entry> subset = subset(pool, mask);
                    QueueState state = semaphore(permits, subset, me);
                    assertThat(state.roundsAhead(me) == 0).as("the pacing agrees with the rule: %s", state)
                            .isEqualTo(state.holds(me));
                    if (!(decide(state, null) instanceof WaitLoop.Grant)) {
                        continue;
                    }
                    for (int fewer = 0; fewer < 1 << pool.size(); fewer++) {
                        if ((fewer & ~mask) == 0) {
                            assertThat(decide(semaphore(permits, subset(pool, fewer), me), null))
                                    .as("permits %d, shared %s: %s holds, so does %s", permits, selfShared, mask, fewer)
                                    .isInstanceOf(WaitLoop.Grant.class);
                        }
                    }
                }
            }
        }
    }

    @Test
    void purgesOnlyWhatKeepsItOutAndOnlyWhenThatLetsItHold() {
        QueueState.Entry deadReader = shared("dr", 1, NOW_MILLIS);
        QueueState.Entry deadWriter = entry("dw", 2, NOW_MILLIS);
        QueueState.Entry liveReader = shared("lr", 3, NOW_MILLIS + 60_000);
        assertThat(decide(queue(deadReader, deadWriter, liveReader, shared("me", 9, NOW_MILLIS + 60_000)), null))
                .as("a reader purges the dead writer only: dead and live readers ahead do not keep it out")
                .isEqualTo(new WaitLoop.Purge(List.of(deadWriter)));
        assertThat(decide(queue(deadReader, deadWriter, liveReader, entry("me", 9, NOW_MILLIS + 60_000)), null))
                .as("a writer behind a live reader gains nothing by purging").isInstanceOf(WaitLoop.Wait.class);
        QueueState.Entry dead1 = entry("d1", 1, NOW_MILLIS);
        QueueState.Entry live2 = entry("l2", 2, NOW_MILLIS + 60_000);
        QueueState.Entry live3 = entry("l3", 3, NOW_MILLIS + 60_000);
        assertThat(decide(semaphore(3, List.of(dead1, live2, live3), entry("me", 9, NOW_MILLIS + 60_000)), null))
                .as("3 permits, 3 ahead, one dead: purging it lets us hold").isEqualTo(new WaitLoop.Purge(List.of(dead1)));
        assertThat(decide(semaphore(2, List.of(dead1, live2, live3), entry("me", 9, NOW_MILLIS + 60_000)), null))
                .as("2 permits, 2 live ahead: purging the dead one is not enough").isInstanceOf(WaitLoop.Wait.class);
        QueueState.Entry failClosedWriter = new QueueState.Entry("k", "pod", 2, NOW_MILLIS - 1, 60_000);
        assertThat(decide(queue(deadReader, failClosedWriter, shared("me", 9, NOW_MILLIS + 60_000)), null))
                .as("a fail-closed writer is never purged as expired; kept out by the dead reader, it never held")
                .isEqualTo(new WaitLoop.PurgeNeverHeld(failClosedWriter, List.of(deadReader)));
    }

    @Test
    void removesAFailClosedEntryWhoseLeaseRanOutOnlyWhileEntriesAheadOfItKeepItOut() {
        QueueState.Entry holder = entry("h", 1, NOW_MILLIS + 60_000);
        QueueState.Entry deadFailClosed = new QueueState.Entry("k", "pod", 2, NOW_MILLIS, 60_000);
        QueueState.Entry me = entry("me", 9, NOW_MILLIS + 60_000);
        assertThat(decide(queue(holder, deadFailClosed, me), null))
                .as("kept out by the live holder").isEqualTo(new WaitLoop.PurgeNeverHeld(deadFailClosed, List.of(holder)));
        assertThat(decide(queue(deadFailClosed, me), null)).as("nothing ahead of it: it may have held")
                .isInstanceOf(WaitLoop.Wait.class);
        QueueState.Entry renewing = new QueueState.Entry("k", "pod", 2, NOW_MILLIS + 1, 60_000);
        assertThat(decide(queue(holder, renewing, me), null)).as("its lease has not run out")
                .isInstanceOf(WaitLoop.Wait.class);
        assertThat(decide(queue(holder, deadFailClosed, me), THROTTLED)).as("not right after a failed request")
                .isInstanceOf(WaitLoop.Wait.class);
        QueueState.Entry a = entry("a", 1, NOW_MILLIS + 60_000);
        QueueState.Entry b = entry("b", 2, NOW_MILLIS + 60_000);
        QueueState.Entry c = entry("c", 3, NOW_MILLIS + 60_000);
        QueueState.Entry deadOfThree = new QueueState.Entry("k", "pod", 4, NOW_MILLIS, 60_000);
        assertThat(decide(semaphore(2, List.of(a, b, c, deadOfThree), me), null))
                .as("2 permits, 3 ahead of it: while the last 2 stay, it cannot hold")
                .isEqualTo(new WaitLoop.PurgeNeverHeld(deadOfThree, List.of(b, c)));
        assertThat(decide(semaphore(2, List.of(a, deadOfThree), me), null))
                .as("2 permits, 1 ahead of it: it may have held").isInstanceOf(WaitLoop.Wait.class);
    }

    /** Purging what keeps a dead fail-closed entry out would let it in, and it would stay until broken. */
    @Test
    void removesADeadFailClosedEntryBeforePurgingWhatKeepsItOut() {
        QueueState.Entry deadWriter = entry("dw", 1, NOW_MILLIS);
        QueueState.Entry deadFailClosedReader = new QueueState.Entry("k", "pod", 2, NOW_MILLIS, 60_000, true);
        assertThat(decide(queue(deadWriter, deadFailClosedReader, shared("me", 9, NOW_MILLIS + 60_000)), null))
                .isEqualTo(new WaitLoop.PurgeNeverHeld(deadFailClosedReader, List.of(deadWriter)));
        QueueState.Entry dead1 = entry("d1", 1, NOW_MILLIS);
        QueueState.Entry dead2 = entry("d2", 2, NOW_MILLIS);
        QueueState.Entry deadFailClosed = new QueueState.Entry("k", "pod", 3, NOW_MILLIS, 60_000);
        assertThat(decide(semaphore(2, List.of(dead1, dead2, deadFailClosed), entry("me", 9, NOW_MILLIS + 60_000)),
                null)).isEqualTo(new WaitLoop.PurgeNeverHeld(deadFailClosed, List.of(dead1, dead2)));
    }

    @Test
    void aSemaphoreWaiterLooksAgainWhenEnoughEntriesAheadWouldHaveExpired() {
        List<QueueState.Entry> ahead = List.of(entry("a", 1, NOW_MILLIS + 30), entry("b", 2, NOW_MILLIS + 10),
                entry("c", 3, NOW_MILLIS + 20));
        assertThat(decide(semaphore(2, ahead, entry("me", 9, NOW_MILLIS + 60_000)), null))
                .as("2 of 3 must go: the second expiry, 20 ms, not the last")
                .isEqualTo(new WaitLoop.Wait(Duration.ofMillis(21).toNanos()));
    }

    @Test
    void pollsPacedByTheRoundsOfGrantsAheadNotByTheEntries() {
        QueueState.Entry r1 = shared("r1", 1, NOW_MILLIS + 60_000);
        QueueState.Entry r2 = shared("r2", 2, NOW_MILLIS + 60_000);
        QueueState.Entry r3 = shared("r3", 3, NOW_MILLIS + 60_000);
        assertThat(decide(queue(r1, r2, r3, entry("me", 9, NOW_MILLIS + 60_000)), null))
                .as("a writer behind three readers: they leave together, one round")
                .isEqualTo(new WaitLoop.Wait(Duration.ofMillis(50).toNanos()));
        assertThat(decide(queue(r1, entry("w", 4, NOW_MILLIS + 60_000), r2, shared("me", 9, NOW_MILLIS + 60_000)), null))
                .as("a reader behind a reader, a writer and a reader: two rounds (the last reader's is its own)")
                .isEqualTo(new WaitLoop.Wait(Duration.ofMillis(100).toNanos()));
        assertThat(decide(semaphore(2, List.of(entry("a", 1, NOW_MILLIS + 60_000), entry("b", 2, NOW_MILLIS + 60_000),
                entry("c", 3, NOW_MILLIS + 60_000), entry("d", 4, NOW_MILLIS + 60_000)),
                entry("me", 9, NOW_MILLIS + 60_000)), null))
                .as("4 ahead of 2 permits: two rounds").isEqualTo(new WaitLoop.Wait(Duration.ofMillis(100).toNanos()));
    }

    private static List<QueueState.Entry> subset(List<QueueState.Entry> entries, int mask) {
        return java.util.stream.IntStream.range(0, entries.size()).filter(i -> (mask & 1 << i) != 0)
                .mapToObj(entries::get).toList();
    }

    private static QueueState semaphore(int permits, List<QueueState.Entry> ahead, QueueState.Entry me) {
        List<QueueState.Entry> all = new java.util.ArrayList<>(ahead);
        all.add(me);
        return new QueueState(100, 0, permits, all);
    }

    private static QueueState.Entry shared(String id, long ticket, long expiresAtMillis) {
        return new QueueState.Entry(id, "pod-" + id, ticket, expiresAtMillis, 0, true);
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
