package io.dynamolock.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/** The pure rules of the queue: who is ahead, what is live, what the TTL must cover, and how wait deadlines compare. */
class QueueStateTests {

    private static final QueueState.Entry HOLDER = new QueueState.Entry("h", "pod-a", 10, 5_000, 0);
    private static final QueueState.Entry SECOND = new QueueState.Entry("s", "pod-b", 11, 9_000, 0);
    private static final QueueState.Entry THIRD = new QueueState.Entry("t", "pod-a", 12, 7_000, 0);

    private final QueueState state = new QueueState(13, 100, List.of(THIRD, HOLDER, SECOND));

    @Test
    void entriesAreInTicketOrderAndAheadMeansALowerTicket() {
        assertThat(state.entries()).containsExactly(HOLDER, SECOND, THIRD);
        assertThat(state.ahead(12)).containsExactly(HOLDER, SECOND);
        assertThat(state.ahead(10)).isEmpty();
    }

    @Test
    void liveEntriesAreThoseNotExpiredYet() {
        assertThat(state.liveAt(4_999)).isEqualTo(3);
        assertThat(state.liveAt(5_000)).as("an entry expires at its expiry").isEqualTo(2);
        assertThat(state.liveAt(9_000)).isZero();
        assertThat(state.latestExpiryMillis()).isEqualTo(9_000);
        assertThat(QueueState.ABSENT.latestExpiryMillis()).isZero();
    }

    @Test
    void aFailClosedEntryNeverExpires() {
        QueueState.Entry failClosed = new QueueState.Entry("f", "pod-c", 9, 1_000, 60_000);
        assertThat(failClosed.isExpiredAt(Long.MAX_VALUE)).isFalse();
        assertThat(new QueueState(13, 100, List.of(failClosed, HOLDER)).liveAt(10_000))
                .as("counted live whatever its lease").isEqualTo(1);
    }

    @Test
    void parsesTheItemAsStored() {
        QueueState parsed = QueueState.of(Map.of("pk", AttributeValue.fromS("order-1"), "sk", AttributeValue.fromS("default"),
                "next", AttributeValue.fromN("13"), "expiresAt", AttributeValue.fromN("100"),
                "t#h", AttributeValue.fromN("10"), "e#h", AttributeValue.fromN("5000"), "o#h", AttributeValue.fromS("pod-a"),
                "t#s", AttributeValue.fromN("11"), "e#s", AttributeValue.fromN("9000")));
        assertThat(parsed.nextTicket()).isEqualTo(13);
        assertThat(parsed.ttlEpochSeconds()).isEqualTo(100);
        assertThat(parsed.entries()).containsExactly(HOLDER,
                new QueueState.Entry("s", "s", 11, 9_000, 0)); // no label stored: the id stands in
        assertThat(QueueState.of(Map.of())).isSameAs(QueueState.ABSENT);
    }

    @Test
    void withoutAnEntryDropsItFromTheQueueAndEveryOneOfItsAttributesFromTheItem() {
        Map<String, AttributeValue> item = new java.util.HashMap<>(Map.of("next", AttributeValue.fromN("13"),
                "t#h", AttributeValue.fromN("10"), "e#h", AttributeValue.fromN("5000"), "o#h", AttributeValue.fromS("pod-a"),
                "k#h", AttributeValue.fromN("2000"), "m#h", AttributeValue.fromS("S"), "w#h", AttributeValue.fromS("10.0.0.1:7000"),
                "t#s", AttributeValue.fromN("11"), "e#s", AttributeValue.fromN("9000"), "lr", AttributeValue.fromN("42")));
        QueueState after = QueueState.of(item).without("h", 42);
        assertThat(after.entries()).containsExactly(new QueueState.Entry("s", "s", 11, 9_000, 0));
        assertThat(after.item()).containsOnlyKeys("next", "t#s", "e#s", "lr");
        assertThat(QueueState.of(after.item()).entries()).isEqualTo(after.entries());
        assertThat(after.nextTicket()).isEqualTo(13);
        assertThat(after.asOfMillis()).isEqualTo(42);
        assertThat(QueueState.of(item).asOfMillis()).as("as DynamoDB answered: true when it arrives").isZero();
    }

    @Test
    void mergingTwoStatesKeepsTheLaterCounterAndDropsWhatEitherShowsGone() {
        QueueState.Entry a = new QueueState.Entry("a", "a", 10, 9_000, 0);
        QueueState.Entry b = new QueueState.Entry("b", "b", 11, 9_000, 0);
        QueueState.Entry c = new QueueState.Entry("c", "c", 12, 9_000, 0);
        QueueState.Entry d = new QueueState.Entry("d", "d", 13, 9_000, 0);
        QueueState handedOver = new QueueState(13, 0, List.of(b, c)).withAsOf(100); // a, done, handed over
        QueueState broken = new QueueState(13, 0, List.of(a, c)).withAsOf(200);     // b, broken meanwhile
        assertThat(handedOver.merge(broken).entries()).as("one counter: what both still show").containsExactly(c);
        assertThat(broken.merge(handedOver).entries()).containsExactly(c);
        assertThat(handedOver.merge(broken).asOfMillis()).isEqualTo(200);

        QueueState later = new QueueState(14, 0, List.of(a, b, c, d)).withAsOf(50); // d enqueued, b not yet broken
        assertThat(later.merge(broken).entries()).as("the later counter keeps d; the earlier state's news drop b")
                .containsExactly(a, c, d);
        assertThat(handedOver.merge(later).merge(broken).entries()).as("in any order").containsExactly(c, d)
                .isEqualTo(broken.merge(later).merge(handedOver).entries());
        assertThat(later.merge(broken).nextTicket()).isEqualTo(14);
        QueueState before = new QueueState(11, 0, List.of(a)).withAsOf(10); // before b enqueued: says nothing of b
        assertThat(later.merge(before).entries()).containsExactly(a, b, c, d);
    }

    /**
     * A state cut after a ticket (a hint whose whole item is too long for a datagram) keeps what is ahead of the
     * entries it keeps, as the item parses, and merged into a state that knows more it shows gone only what it
     * lacks below its counter: nothing behind the cut.
     */
    @Test
    void aStateCutAfterATicketKeepsWhatIsAheadAndDropsNothingBehindWhenMerged() {
        Map<String, AttributeValue> item = new java.util.HashMap<>(Map.of("next", AttributeValue.fromN("13"),
                "t#h", AttributeValue.fromN("10"), "e#h", AttributeValue.fromN("5000"),
                "t#s", AttributeValue.fromN("11"), "e#s", AttributeValue.fromN("9000"),
                "t#t", AttributeValue.fromN("12"), "e#t", AttributeValue.fromN("7000"), "o#t", AttributeValue.fromS("pod-a"),
                "lr", AttributeValue.fromN("42")));
        QueueState whole = QueueState.of(item).withAsOf(100);
        QueueState cut = whole.without("h", 100).upTo(11);
        assertThat(cut.entries()).extracting(QueueState.Entry::id).containsExactly("s");
        assertThat(cut.nextTicket()).isEqualTo(12);
        assertThat(cut.asOfMillis()).isEqualTo(100);
        assertThat(cut.item()).containsOnlyKeys("next", "t#s", "e#s", "lr");
        QueueState parsed = QueueState.of(cut.item());
        assertThat(parsed.entries()).isEqualTo(cut.entries());
        assertThat(parsed.nextTicket()).as("as the receiver reads it").isEqualTo(12);
        assertThat(parsed.holds(parsed.entry("s"))).isTrue();

        assertThat(whole.merge(parsed).entries()).as("the holder gone, the entry behind the cut kept")
                .extracting(QueueState.Entry::id).containsExactly("s", "t");
        assertThat(whole.merge(parsed).asOfMillis()).isEqualTo(100);
        assertThat(whole.upTo(12)).as("nothing behind the cut: the same state").isSameAs(whole);
    }

    /**
     * A merged state is as old as the later counter's: a state of an earlier counter adds only entries gone, so it
     * must not make stale entries look fresh (the empty state of a missing item least of all).
     */
    @Test
    void aStateOfAnEarlierCounterDoesNotMakeTheMergeFresher() {
        QueueState.Entry a = new QueueState.Entry("a", "a", 10, 9_000, 0);
        QueueState.Entry b = new QueueState.Entry("b", "b", 11, 9_000, 0);
        QueueState known = new QueueState(12, 0, List.of(a, b)).withAsOf(50);
        QueueState earlierButStampedLater = new QueueState(11, 0, List.of(a)).withAsOf(200);
        assertThat(known.merge(earlierButStampedLater).asOfMillis()).isEqualTo(50);
        assertThat(earlierButStampedLater.merge(known).asOfMillis()).isEqualTo(50);
        assertThat(known.merge(QueueState.ABSENT.withAsOf(300)).asOfMillis()).isEqualTo(50);
        assertThat(known.merge(QueueState.ABSENT.withAsOf(300)).entries()).containsExactly(a, b);
    }

    /** The holders found in one pass are exactly the entries the grant rule lets hold, one by one. */
    @Test
    void theHoldersAreTheEntriesTheGrantRuleLetsHold() {
        java.util.Random random = new java.util.Random(12);
        for (int round = 0; round < 2_000; round++) {
            boolean semaphore = random.nextBoolean();
            int permits = semaphore ? 1 + random.nextInt(4) : 1;
            List<QueueState.Entry> entries = new java.util.ArrayList<>();
            int size = random.nextInt(12);
            long ticket = 10;
            for (int i = 0; i < size; i++) {
                boolean shared = !semaphore && random.nextBoolean();
                ticket += 1 + random.nextInt(3); // gaps: entries that left
                entries.add(new QueueState.Entry("e" + i, "o", ticket, 9_000, 0, shared));
            }
            java.util.Collections.shuffle(entries, random);
            QueueState state = new QueueState(100, 0, permits, entries);
            assertThat(state.holders()).as("%s", state.entries())
                    .isEqualTo(state.entries().stream().filter(state::holds).toList());
        }
    }

    @Test
    void entryIdsAreRandomAndUrlSafe() {
        String first = EntryIds.next();
        assertThat(first).hasSize(16).matches("[A-Za-z0-9_-]+");
        assertThat(EntryIds.next()).isNotEqualTo(first);
    }

    @Test
    void waitDeadlinesAreNeverReachedForForeverAndSafeAcrossWrapAround() {
        long start = Long.MAX_VALUE - 10; // nanoTime may be anywhere, and the sum may wrap
        long deadline = Waits.deadline(start, Duration.ofMillis(5));
        assertThat(deadline - start).isEqualTo(Duration.ofMillis(5).toNanos());
        assertThat(Waits.earlier(start, deadline)).isEqualTo(start);
        assertThat(Waits.isForever(Duration.ofDays(365L * 200))).isTrue();
        assertThat(Waits.deadline(0, Duration.ofDays(365L * 200)) - 0).isPositive();
    }
}
