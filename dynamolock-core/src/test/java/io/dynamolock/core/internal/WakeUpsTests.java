package io.dynamolock.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.WakeUpOptions;
import io.dynamolock.core.test.Await;
import java.time.Duration;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/** Who a removal's hints go to, and what reaches a waiter: two templates' endpoints on loopback. */
class WakeUpsTests {

    private static final String SECRET = "0123456789abcdef0123456789abcdef";
    private static final LockKey KEY = new LockKey("order-7", "default");

    private WakeUps sender;
    private WakeUps receiver;
    private final BlockingQueue<Object> woken = new LinkedBlockingQueue<>();
    private volatile long wokenAsOf;

    @AfterEach
    void close() {
        if (sender != null) {
            sender.close();
            receiver.close();
        }
    }

    private void open(String secret) {
        WakeUpOptions options = WakeUpOptions.builder().bindAddress("127.0.0.1").secret(secret).build();
        sender = new WakeUps(options, Clock.systemUTC());
        receiver = new WakeUps(options, Clock.systemUTC());
    }

    private WakeUps.Addressee addressee(LockKey key) {
        return new WakeUps.Addressee() {
            @Override
            public LockKey key() {
                return key;
            }

            @Override
            public void wokenWith(QueueState state) {
                wokenAsOf = state.asOfMillis();
                woken.add(state);
            }

            @Override
            public void woken() {
                woken.add("plain");
            }
        };
    }

    private Map<String, AttributeValue> item(long now, Object... idTicketExpiryAddress) {
        Map<String, AttributeValue> item = new HashMap<>(Map.of("next", AttributeValue.fromN("100")));
        for (int i = 0; i < idTicketExpiryAddress.length; i += 4) {
            String id = (String) idTicketExpiryAddress[i];
            item.put("t#" + id, AttributeValue.fromN(idTicketExpiryAddress[i + 1].toString()));
            item.put("e#" + id, AttributeValue.fromN(Long.toString(now + (Long) idTicketExpiryAddress[i + 2])));
            item.put("w#" + id, AttributeValue.fromS((String) idTicketExpiryAddress[i + 3]));
        }
        return item;
    }

    @Test
    void anAuthenticatedHintCarriesTheReturnedItemToTheNewHead() throws Exception {
        open(SECRET);
        receiver.register("next", addressee(KEY));
        long now = System.currentTimeMillis();
        sender.afterRemoval(KEY, item(now, "next", 5, 60_000L, receiver.address(), "later", 6, 60_000L,
                receiver.address()));
        Object state = woken.poll(10, TimeUnit.SECONDS);
        assertThat(state).isInstanceOf(QueueState.class);
        assertThat(((QueueState) state).entries()).extracting(QueueState.Entry::id).containsExactly("next", "later");
        Await.until(Duration.ofSeconds(10), "the send counted", () -> sender.stats().sent() == 1);
        assertThat(sender.stats().dropped()).isZero();
        assertThat(receiver.stats().received()).as("only the entry that may hold is hinted").isEqualTo(1);
        assertThat(woken).isEmpty();
    }

    @Test
    void withoutASecretTheHintIsPlainAndADeadHeadAlsoWakesTheFirstLiveEntry() throws Exception {
        open(null);
        receiver.register("live", addressee(KEY));
        long now = System.currentTimeMillis();
        sender.afterRemoval(KEY, item(now, "dead", 5, -1L, receiver.address(), "live", 6, 60_000L,
                receiver.address()));
        assertThat(woken.poll(10, TimeUnit.SECONDS)).isEqualTo("plain");
        Await.until(Duration.ofSeconds(10), "the dead head's process is hinted too",
                () -> receiver.stats().received() == 2);
    }

    /**
     * The item is table data: an entry id that no acquisition could have (ours are 16 characters of base64url) would
     * put text of the writer's choosing into the datagram (a line a local agent would parse): no hint to it.
     */
    @Test
    void anEntryWhoseIdNoAcquisitionCouldHaveIsNotHinted() throws Exception {
        open(null);
        receiver.register("next", addressee(KEY));
        long now = System.currentTimeMillis();
        Map<String, AttributeValue> twoReaders = item(now, "x\ninjected.metric:1|c\n", 5, 60_000L,
                receiver.address(), "next", 6, 60_000L, receiver.address());
        twoReaders.put("m#x\ninjected.metric:1|c\n", AttributeValue.fromS("S"));
        twoReaders.put("m#next", AttributeValue.fromS("S"));
        sender.afterRemoval(KEY, twoReaders);
        assertThat(woken.poll(10, TimeUnit.SECONDS)).isEqualTo("plain");
        assertThat(sender.stats().sent()).as("only the entry with an id of ours").isEqualTo(1);
    }

    @Test
    void aRemovalHintsABoundedNumberOfEntries() throws Exception {
        open(null);
        long now = System.currentTimeMillis();
        int readers = WakeUps.REMOVAL_RECIPIENTS + 6;
        Object[] entries = new Object[readers * 4];
        for (int i = 0; i < readers; i++) {
            System.arraycopy(new Object[] {"reader" + i, i + 1, 60_000L, receiver.address()}, 0, entries, 4 * i, 4);
        }
        Map<String, AttributeValue> allReaders = item(now, entries);
        allReaders.keySet().stream().filter(name -> name.startsWith("t#")).toList()
                .forEach(ticket -> allReaders.put("m#" + ticket.substring(2), AttributeValue.fromS("S")));
        sender.afterRemoval(KEY, allReaders);
        assertThat(sender.stats().sent()).isEqualTo(WakeUps.REMOVAL_RECIPIENTS);
    }

    /**
     * A semaphore of more permits than the cap, all held on other instances: a release lets the first waiter in. The
     * cap takes the first entries by ticket, which held already and drop the hint; the one it let in is last.
     */
    @Test
    void aSemaphoresNewHolderIsHintedHoweverManyHoldAlready() throws Exception {
        open(null);
        receiver.register("newHolder", addressee(KEY));
        long now = System.currentTimeMillis();
        int permits = WakeUps.REMOVAL_RECIPIENTS + 6;
        Object[] entries = new Object[permits * 4];
        for (int i = 0; i < permits - 1; i++) { // ticket 1 has just left
            System.arraycopy(new Object[] {"holder" + i, i + 2, 60_000L, receiver.address()}, 0, entries, 4 * i, 4);
        }
        System.arraycopy(new Object[] {"newHolder", permits + 1, 60_000L, receiver.address()}, 0, entries,
                4 * (permits - 1), 4);
        Map<String, AttributeValue> afterOneLeft = item(now, entries);
        afterOneLeft.put("permits", AttributeValue.fromN(Integer.toString(permits)));
        assertThat(WakeUps.mayHold(QueueState.of(afterOneLeft), now)).extracting(QueueState.Entry::id)
                .contains("newHolder");
        sender.afterRemoval(KEY, afterOneLeft);
        assertThat(woken.poll(10, TimeUnit.SECONDS)).as("the entry the release let in is hinted").isEqualTo("plain");
    }

    @Test
    void neitherItsOwnEntriesNorAnotherLocksWaiterAreWoken() throws Exception {
        open(SECRET);
        receiver.register("next", addressee(new LockKey("order-8", "default")));
        long now = System.currentTimeMillis();
        sender.afterRemoval(KEY, item(now, "own", 4, 60_000L, sender.address()));
        sender.afterRemoval(KEY, item(now, "next", 5, 60_000L, receiver.address()));
        Await.until(Duration.ofSeconds(10), "the hint arrived",
                () -> receiver.stats().received() == 1 && sender.stats().sent() == 1);
        assertThat(woken).as("a hint of another lock than the waiter's wakes nothing").isEmpty();
        assertThat(sender.stats().sent()).as("nothing to its own address").isEqualTo(1);
    }

    /**
     * The holder learns of an entry that enqueued after its grant: the enqueue's item, for its hand-over; and the
     * next in line, in case the holder has handed over already. Not the entries further back.
     */
    @Test
    void anEnqueueTellsTheHolderAndTheNextInLineOfItself() throws Exception {
        open(SECRET);
        receiver.register("holder", addressee(KEY));
        long now = System.currentTimeMillis();
        sender.afterEnqueue(KEY, QueueState.of(item(now, "holder", 4, 60_000L, receiver.address(), "next", 5, 60_000L,
                receiver.address(), "later", 6, 60_000L, receiver.address(), "new", 7, 60_000L, sender.address())),
                "new");
        Object state = woken.poll(10, TimeUnit.SECONDS);
        assertThat(state).isInstanceOf(QueueState.class);
        assertThat(((QueueState) state).entries()).extracting(QueueState.Entry::id)
                .containsExactly("holder", "next", "later", "new");
        Await.until(Duration.ofSeconds(10), "both hints arrived", () -> receiver.stats().received() == 2);
        assertThat(sender.stats().sent()).as("the holder and the next, not the one behind it").isEqualTo(2);
    }

    @Test
    void anEnqueueTellsAtMostFourEntriesOnlyWithItsItem() throws Exception {
        open(null);
        long now = System.currentTimeMillis();
        QueueState oneHolder = QueueState.of(item(now, "holder", 4, 60_000L, receiver.address(), "new", 5, 60_000L,
                sender.address()));
        sender.afterEnqueue(KEY, oneHolder, "new");
        assertThat(sender.stats().sent() + sender.stats().dropped()).as("plain hints: a holder has no use for a read")
                .isZero();
        close();

        open(SECRET);
        Object[] readers = new Object[6 * 4];
        for (int i = 0; i < 6; i++) {
            System.arraycopy(new Object[] {"reader" + i, i + 1, 60_000L, receiver.address()}, 0, readers, 4 * i, 4);
            receiver.register("reader" + i, addressee(KEY));
        }
        Map<String, AttributeValue> sixReadersThenAWriter = item(now, readers);
        sixReadersThenAWriter.keySet().stream().filter(name -> name.startsWith("t#")).toList()
                .forEach(ticket -> sixReadersThenAWriter.put("m#" + ticket.substring(2), AttributeValue.fromS("S")));
        sixReadersThenAWriter.putAll(item(now, "writer", 7, 60_000L, sender.address()));
        sender.afterEnqueue(KEY, QueueState.of(sixReadersThenAWriter), "writer");
        for (int i = 0; i < 4; i++) {
            assertThat(woken.poll(10, TimeUnit.SECONDS)).as("the item, to a reader").isInstanceOf(QueueState.class);
        }
        Await.until(Duration.ofSeconds(10), "the hints arrived", () -> receiver.stats().received() == 4);
        assertThat(sender.stats().sent()).as("four of the six readers holding").isEqualTo(4);
        assertThat(woken).isEmpty();

        Map<String, AttributeValue> big = new HashMap<>(sixReadersThenAWriter);
        big.put("o#writer", AttributeValue.fromS("x".repeat(HintCodec.MAX_DATAGRAM_BYTES)));
        sender.afterEnqueue(KEY, QueueState.of(big), "writer");
        assertThat(sender.stats().dropped()).as("too long for a datagram: dropped, never sent plain").isEqualTo(4);
        assertThat(sender.stats().sent()).isEqualTo(4);
    }

    @Test
    void aHandOverCarriesTheHoldersNewestStateWithoutItsEntryToTheNextInLine() throws Exception {
        open(SECRET);
        receiver.register("next", addressee(KEY));
        long now = System.currentTimeMillis();
        QueueState known = QueueState.of(item(now, "holder", 4, 60_000L, sender.address(), "next", 5, 60_000L,
                receiver.address(), "later", 6, 60_000L, receiver.address()));
        sender.handOver(KEY, known.withAsOf(now - 1_000), "holder");
        Object state = woken.poll(10, TimeUnit.SECONDS);
        assertThat(wokenAsOf).as("stamped with when the state was true, not when it was sent").isEqualTo(now - 1_000);
        assertThat(state).isInstanceOf(QueueState.class);
        QueueState handedOver = (QueueState) state;
        assertThat(handedOver.entries()).extracting(QueueState.Entry::id).containsExactly("next", "later");
        assertThat(handedOver.item()).as("none of the holder's attributes").doesNotContainKeys("t#holder",
                "e#holder", "w#holder");
        assertThat(receiver.stats().received()).as("only the entry that holds once the holder is gone").isEqualTo(1);

        sender.handOver(KEY, known.withAsOf(now + 5_000), "holder"); // the sender's clock runs ahead of ours
        assertThat(woken.poll(10, TimeUnit.SECONDS)).isInstanceOf(QueueState.class);
        assertThat(wokenAsOf).as("no fresher than its arrival").isLessThanOrEqualTo(System.currentTimeMillis());
    }

    @Test
    void aHandOverNeedsASecretAnItemThatFitsAndTheHolderInTheState() throws Exception {
        open(null);
        long now = System.currentTimeMillis();
        QueueState known = QueueState.of(item(now, "holder", 4, 60_000L, sender.address(), "next", 5, 60_000L,
                receiver.address()));
        sender.handOver(KEY, known.withAsOf(now), "holder");
        assertThat(sender.stats().sent() + sender.stats().dropped()).as("plain hints: no hand-over").isZero();
        close();

        open(SECRET);
        sender.handOver(KEY, known.withAsOf(now), "someone-else");
        sender.handOver(KEY, known.withAsOf(now - WakeUps.FRESHNESS.toMillis()), "holder");
        sender.handOver(KEY, null, "holder");
        assertThat(sender.stats().sent() + sender.stats().dropped()).as("not the holder's state, or too old").isZero();

        Map<String, AttributeValue> failClosedNext = new HashMap<>(known.item());
        failClosedNext.put("k#next", AttributeValue.fromN("60000"));
        sender.handOver(KEY, QueueState.of(failClosedNext).withAsOf(now), "holder");
        assertThat(sender.stats().sent() + sender.stats().dropped()).as("never to a fail-closed entry").isZero();

        Map<String, AttributeValue> big = new HashMap<>(known.item());
        big.put("o#next", AttributeValue.fromS("x".repeat(HintCodec.MAX_DATAGRAM_BYTES)));
        receiver.register("next", addressee(KEY));
        sender.handOver(KEY, QueueState.of(big).withAsOf(now), "holder");
        assertThat(sender.stats().dropped()).as("too long for a datagram: dropped, never sent plain").isEqualTo(1);
        assertThat(sender.stats().sent()).isZero();
    }

    @Test
    void aBreakAlsoTellsTheEntriesAheadOfTheBrokenOne() throws Exception {
        open(SECRET);
        long now = System.currentTimeMillis();
        // A finished holder still in the item (its release not landed), the holder it handed over to, and the
        // entry behind the broken one: the second, holding by a hand-over, must hear that the broken one is gone.
        Map<String, AttributeValue> afterBreak = item(now, "finished", 4, 60_000L, receiver.address(), "handedOver", 5,
                60_000L, receiver.address(), "behind", 7, 60_000L, receiver.address());
        receiver.register("handedOver", addressee(KEY));
        sender.afterBreak(KEY, afterBreak, 6);
        Object state = woken.poll(10, TimeUnit.SECONDS);
        assertThat(state).isInstanceOf(QueueState.class);
        assertThat(((QueueState) state).entries()).extracting(QueueState.Entry::id)
                .containsExactly("finished", "handedOver", "behind");
        Await.until(Duration.ofSeconds(10), "both entries ahead hinted", () -> receiver.stats().received() == 2);
    }

    /**
     * A state too long for a datagram (a long queue) goes out cut after its last recipient, which decides its grant
     * by what is ahead of it: a hand-over is not dropped, a release's hint is not sent plain.
     */
    @Test
    void aStateTooLongForADatagramGoesOutCutAfterItsLastRecipient() throws Exception {
        open(SECRET);
        receiver.register("next", addressee(KEY));
        long now = System.currentTimeMillis();
        Map<String, AttributeValue> item = item(now, "holder", 4, 60_000L, sender.address(), "next", 5, 60_000L,
                receiver.address(), "later", 6, 60_000L, receiver.address());
        item.put("o#later", AttributeValue.fromS("x".repeat(HintCodec.MAX_DATAGRAM_BYTES)));

        sender.handOver(KEY, QueueState.of(item).withAsOf(now), "holder");
        assertThat(cutAfterNext(woken.poll(10, TimeUnit.SECONDS))).as("the hand-over").isTrue();
        item.keySet().removeIf(name -> name.endsWith("#holder"));
        sender.afterRemoval(KEY, item);
        assertThat(cutAfterNext(woken.poll(10, TimeUnit.SECONDS))).as("the release's hint, not plain").isTrue();
        assertThat(sender.stats().dropped()).isZero();
        assertThat(sender.stats().sent()).isEqualTo(2);
    }

    /**
     * The cut comes as late as still fits, just before an entry: the recipient also learns what it can of who is
     * behind it, for its own hand-over (a break there, say).
     */
    @Test
    void theCutComesAsLateAsFitsJustBeforeAnEntry() throws Exception {
        open(SECRET);
        receiver.register("next", addressee(KEY));
        long now = System.currentTimeMillis();
        Map<String, AttributeValue> item = item(now, "holder", 4, 60_000L, sender.address(), "next", 5, 60_000L,
                receiver.address());
        for (int ticket = 7; ticket < 47; ticket += 2) { // every other ticket gone
            item.putAll(item(now, "behind" + ticket, ticket, 60_000L, receiver.address()));
            item.put("o#behind" + ticket, AttributeValue.fromS("owner-" + ticket + "-".repeat(40)));
        }
        QueueState known = QueueState.of(item).withAsOf(now);
        sender.handOver(KEY, known, "holder");

        Object woken = this.woken.poll(10, TimeUnit.SECONDS);
        assertThat(woken).isInstanceOf(QueueState.class);
        QueueState cut = (QueueState) woken;
        List<Long> tickets = cut.entries().stream().map(QueueState.Entry::ticket).toList();
        assertThat(tickets.get(0)).isEqualTo(5);
        assertThat(tickets).as("some of those behind, not all").hasSizeGreaterThan(2).hasSizeLessThan(21);
        long firstLeftOut = known.entries().stream().mapToLong(QueueState.Entry::ticket)
                .filter(ticket -> ticket > tickets.get(tickets.size() - 1)).min().orElseThrow();
        assertThat(cut.nextTicket()).as("just before the first entry left out").isEqualTo(firstLeftOut);
        HintCodec codec = new HintCodec(SECRET.getBytes(java.nio.charset.StandardCharsets.UTF_8), Clock.systemUTC(),
                WakeUps.FRESHNESS);
        QueueState handedOver = known.without("holder", now);
        long nextAfter = known.entries().stream().mapToLong(QueueState.Entry::ticket)
                .filter(ticket -> ticket > firstLeftOut).min().orElse(-1);
        QueueState oneMore = nextAfter < 0 ? handedOver : handedOver.upTo(nextAfter - 1);
        assertThat(codec.encode(new WakeUpHint(KEY, "next", now, oneMore.item(), true)))
                .as("one entry more would not fit").isNull();
    }

    private static boolean cutAfterNext(Object woken) {
        return woken instanceof QueueState state && state.nextTicket() == 6
                && state.entries().stream().map(QueueState.Entry::id).toList().equals(List.of("next"));
    }

    /** A break's state is never cut before the broken entry: the entries ahead must learn that it is gone. */
    @Test
    void aBreakTooLongForADatagramIsCutAfterTheBrokenEntry() throws Exception {
        open(SECRET);
        receiver.register("handedOver", addressee(KEY));
        long now = System.currentTimeMillis();
        Map<String, AttributeValue> afterBreak = item(now, "finished", 4, 60_000L, receiver.address(), "handedOver", 5,
                60_000L, receiver.address(), "behind", 7, 60_000L, receiver.address());
        afterBreak.put("o#behind", AttributeValue.fromS("x".repeat(HintCodec.MAX_DATAGRAM_BYTES)));
        sender.afterBreak(KEY, afterBreak, 6);

        Object state = woken.poll(10, TimeUnit.SECONDS);
        assertThat(state).isInstanceOf(QueueState.class);
        assertThat(((QueueState) state).nextTicket()).as("cut after the broken ticket").isEqualTo(7);
        QueueState knownBefore = QueueState.of(item(now, "finished", 4, 60_000L, receiver.address(), "handedOver", 5,
                60_000L, receiver.address(), "broken", 6, 60_000L, receiver.address()));
        assertThat(knownBefore.merge((QueueState) state).entries()).extracting(QueueState.Entry::id)
                .containsExactly("finished", "handedOver");
    }

    @Test
    void hintsEveryEntryThatMayHoldByTheGrantRule() {
        long now = 1_000_000;
        long live = now + 60_000;
        List<QueueState.Entry> readersThenWriter = List.of(new QueueState.Entry("r1", "o", 1, live, 0, true),
                new QueueState.Entry("r2", "o", 2, live, 0, true), new QueueState.Entry("w", "o", 3, live, 0, false),
                new QueueState.Entry("r3", "o", 4, live, 0, true));
        assertThat(WakeUps.mayHold(new QueueState(5, 0, 1, readersThenWriter), now)).extracting(QueueState.Entry::id)
                .as("the readers ahead of the writer, not the writer nor the reader behind it")
                .containsExactly("r1", "r2");

        List<QueueState.Entry> three = List.of(new QueueState.Entry("a", "o", 1, now - 1, 0),
                new QueueState.Entry("b", "o", 2, live, 0), new QueueState.Entry("c", "o", 3, live, 0),
                new QueueState.Entry("d", "o", 4, live, 0));
        assertThat(WakeUps.mayHold(new QueueState(5, 0, 2, three), now)).extracting(QueueState.Entry::id)
                .as("two permits: the first two, and the live ones that hold once the dead head is purged")
                .containsExactly("a", "b", "c");
    }
}
