package io.dynamolock.core.internal;

import io.dynamolock.core.LockOptionException;
import io.dynamolock.core.WakeUpOptions;
import io.dynamolock.core.WakeUpStats;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Wake-up hints of one template: the entries it enqueues carry its address ({@code w#<id>} in the item); when it
 * removes entries (a release, a purge) it sends a hint, with the item as its write returned it, to the process of
 * each entry that may now hold; with a secret, a holder that is done also {@linkplain #handOver hands the lock
 * over} before its release is sent, and an enqueue that will wait tells the holders' processes of itself
 * ({@link #afterEnqueue}). Hints it receives go to its waiters, and to its holders, which learn from them who is
 * behind them.
 *
 * <p>What a hint may do to a waiter, and why that is safe whatever the network does:
 * <ul>
 * <li>A plain hint only makes the waiter read the queue, at most once per interval of its poll schedule (once
 * between two of its polls): a lost one costs the poll interval, forged or duplicated ones at most one read per
 * interval.</li>
 * <li>An authenticated hint's item is offered to the waiter exactly as a same-JVM release's state is
 * ({@link Acquisition#offer}): it is a linearizable read of the item, and entries ahead of a ticket only ever
 * disappear, so a state that shows nothing live ahead of the waiter's entry proves the lock free whenever it
 * arrives (delayed, duplicated, reordered). A state without the waiter's entry proves nothing (it may predate
 * the enqueue) and is ignored, never taken for a removal. A state of another lock cannot hold the entry (ids are
 * random per acquisition), and a hint for another lock than the addressee's is dropped. A hand-over's state is
 * not a read but over-approximates one the same way (see {@link #handOver}), so the receiver needs no rule of its
 * own for it. Nor for a state cut after its recipients when the whole item is too long for a datagram
 * ({@link QueueState#upTo}): it keeps everything ahead of every entry it keeps.</li>
 * </ul>
 */
final class WakeUps implements AutoCloseable {

    /** How old a received hint may be; a slower one is worth no more than the next poll. */
    static final Duration FRESHNESS = Duration.ofSeconds(10);

    /** How many entries ahead an enqueue tells of itself ({@link #afterEnqueue}). */
    static final int ENQUEUE_RECIPIENTS = 4;

    /**
     * How many entries one write's hints go to at most, so that an item written with many entries cannot make one
     * removal send without bound: of those that may hold (a long run of readers, a semaphore's holders), the last
     * by ticket, among which the ones the write let in. The others poll.
     */
    static final int REMOVAL_RECIPIENTS = 64;

    /** A waiter, and once granted the holder it became, until it leaves: as hints reach it. */
    interface Addressee {

        LockKey key();

        /** An authenticated hint's state, stamped with the hint's time: treat as a same-JVM release's. */
        void wokenWith(QueueState state);

        /** A plain hint: read the queue now, unless a hint made it read since its last poll already. */
        void woken();
    }

    private final HintEndpoint endpoint;
    private final Clock clock;
    private final Map<String, Addressee> addressees = new ConcurrentHashMap<>();
    private final AtomicLong useful = new AtomicLong();
    private final boolean sendItems;

    WakeUps(WakeUpOptions options, Clock clock) {
        this.clock = clock;
        byte[] secret = options.secret();
        this.sendItems = secret != null;
        InetSocketAddress bind = new InetSocketAddress(options.bindAddress(), options.port());
        if (bind.isUnresolved()) {
            throw new LockOptionException("wakeUp.bindAddress", options.bindAddress(), "wakeUp.bindAddress '"
                    + options.bindAddress() + "' is not an address of this host (it does not resolve); use one of"
                    + " its addresses, or 0.0.0.0 for every interface");
        }
        this.endpoint = new HintEndpoint(bind, options.advertisedAddress(), new HintCodec(secret, clock, FRESHNESS),
                this::deliver);
    }

    /** Where others send this template's hints: what its entries carry. */
    String address() {
        return endpoint.advertisedAddress();
    }

    void register(String entryId, Addressee addressee) {
        addressees.put(entryId, addressee);
    }

    void unregister(String entryId) {
        addressees.remove(entryId);
    }

    /** A hint let a waiter take the lock or read earlier than its schedule. */
    void countUseful() {
        useful.incrementAndGet();
    }

    private void deliver(WakeUpHint hint) {
        Addressee addressee = addressees.get(hint.entryId());
        if (addressee == null || !addressee.key().equals(hint.key())) {
            return; // granted, gone, or a hint of another lock: nothing to wake
        }
        if (hint.item() != null) {
            // A sender's clock may run ahead of ours: a state is no fresher here than its arrival.
            addressee.wokenWith(QueueState.of(hint.item()).withAsOf(Math.min(hint.sentAtMillis(), clock.millis())));
        }
        else {
            addressee.woken();
        }
    }

    /**
     * After a write of this template removed entries of {@code key}: hints to the processes of the entries that
     * may hold in {@code item} (the item as the write returned it), except this template's own (the same-JVM
     * handoff serves them). Never blocks and never throws.
     */
    void afterRemoval(LockKey key, Map<String, AttributeValue> item) {
        if (item == null || item.isEmpty()) {
            return;
        }
        QueueState state = QueueState.of(item);
        send(key, state, recipients(state, Long.MIN_VALUE), clock.millis(), false, Long.MIN_VALUE);
    }

    /**
     * After an operator's break of the entry with {@code brokenTicket} of {@code key}: as {@link #afterRemoval},
     * and to the entries ahead of it too. One of them may hold by a hand-over while the grant rule still names the
     * holder that handed over, and it must not hand the lock to the broken entry.
     */
    void afterBreak(LockKey key, Map<String, AttributeValue> item, long brokenTicket) {
        if (item != null && !item.isEmpty()) {
            QueueState state = QueueState.of(item);
            send(key, state, recipients(state, brokenTicket), clock.millis(), false, brokenTicket);
        }
    }

    /**
     * After an enqueue of this template that did not grant, of an acquisition that will wait: with authenticated
     * hints, the processes of the entries that hold in {@code state} (the item as the enqueue returned it), and of
     * those that hold once they have left, hear of the new entry {@code enqueued}, so that their
     * {@linkplain #handOver hand-over} includes it. A holder otherwise knows only of the waiters in the states it
     * has seen since its enqueue, and one that enqueued after those (the usual case of two processes taking turns:
     * each enqueues while the other holds) would wait for the release's round trip. The next in line is told too,
     * since the holder the item names may have handed over already. The item is a linearizable read like a
     * removal's, so it may also grant an entry it shows holding whose process has not read that yet.
     *
     * <p>Costs are bounded: at most {@link #ENQUEUE_RECIPIENTS} entries are told (behind many readers or a
     * semaphore's holders, the first by ticket), and an item too long for a datagram goes to none of them (it
     * cannot be cut before the new entry, the last, and a plain hint would be of no use); plain hints send nothing
     * here. Those not told hand over without the new entry, which then waits for a release, unless they learn of
     * it otherwise (a renewal's answer). Never blocks and never throws.
     */
    void afterEnqueue(LockKey key, QueueState state, String enqueued) {
        QueueState.Entry self = state.entry(enqueued);
        if (!sendItems || self == null) {
            return;
        }
        Set<QueueState.Entry> told = new LinkedHashSet<>(state.holders());
        List<QueueState.Entry> rest = state.entries().stream().filter(entry -> !told.contains(entry)).toList();
        told.addAll(new QueueState(state.nextTicket(), state.ttlEpochSeconds(), state.permits(), rest).holders());
        // Never cut before our entry: it is the word.
        send(key, state, told.stream().filter(entry -> !entry.equals(self)).limit(ENQUEUE_RECIPIENTS).toList(),
                clock.millis(), true, self.ticket());
    }

    /** Whether holders hand the lock over (authenticated hints): only then does what they know of the queue count. */
    boolean handsOver() {
        return sendItems;
    }

    /**
     * A hand-over: holder {@code leaving} of {@code key} is done, and its release is about to be sent. With
     * authenticated hints, the processes of the entries that may hold once it has left hear it now, with the
     * newest state the holder knows ({@code known}) without the holder's entry, instead of one round trip later
     * with the item its release returns.
     *
     * <p>Why the receiver may grant on it as on a returned item: the holder has stopped using the lock, so it no
     * longer counts, whatever the item says until its release lands; and for every entry in the known state, the
     * entries ahead of it now are a subset of those the state shows (entries ahead of a ticket only ever
     * disappear). So the state over-approximates who is ahead of each of its entries, and the grant rule is
     * monotone. A receiver that is not in the state (it enqueued later) ignores it and waits for the release's own
     * hint. The holder's word that it is done is the trust the shared secret already stands for: a process with
     * the secret could send any item. Plain hints are never sent here: they would make the receiver read a queue
     * that still shows the holder. Never blocks and never throws. Returns the state handed over, for this JVM's
     * own waiters ({@link Handoff#handOver}), or {@code null} if there is none.
     *
     * <p>Two limits keep what a receiver may act on as fresh as a returned item:
     * <ul>
     * <li>The hint carries the time the state was true, not the send time, so receivers drop it once that is older
     * than {@link #FRESHNESS}, as any hint. Within that time the state may still show an entry that an operator
     * broke while it waited, if the holder has not heard of the break (its hint lost, the breaker without the
     * secret or without hints): unlike a returned item, which never shows a broken waiter holding, the hand-over
     * may then let that entry in beside the next holder, until its next renewal finds its entry gone. So breaking a
     * live waiter is as unsafe as breaking a live holder (README, "Breaking a live entry"); only silent entries
     * should be broken.</li>
     * <li>Fail-closed entries are never handed over to. A dead fail-closed waiter is removed on the proof that the
     * entries ahead still keep it out ({@link WaitLoop}); a holder that handed over stays in the item until its
     * release lands, so it would keep nothing out, and only states from DynamoDB may let a fail-closed entry in.
     * So a reader behind a fail-closed reader may start first; the two may hold together, so only their starts
     * leave ticket order, never their grants.</li>
     * </ul>
     */
    QueueState handOver(LockKey key, QueueState known, String leaving) {
        if (!sendItems || known == null || known.entry(leaving) == null
                || clock.millis() - known.asOfMillis() >= FRESHNESS.toMillis()) {
            return null;
        }
        QueueState after = known.without(leaving, known.asOfMillis());
        Set<QueueState.Entry> recipients = recipients(after, Long.MIN_VALUE);
        recipients.removeIf(QueueState.Entry::failClosed);
        send(key, after, recipients, known.asOfMillis(), true, Long.MIN_VALUE);
        return after;
    }

    /** The entries that {@link #mayHold} in {@code state}, and those ahead of ticket {@code alsoAheadOf}. */
    private Set<QueueState.Entry> recipients(QueueState state, long alsoAheadOf) {
        Set<QueueState.Entry> recipients = mayHold(state, clock.millis());
        recipients.addAll(state.ahead(alsoAheadOf));
        return recipients;
    }

    /**
     * To each of {@code recipients} not of this template: with authenticated hints, {@code state}'s item, or if
     * that is too long for a datagram, the state cut as late as fits, but never before the last recipient or ticket
     * {@code keepThrough} ({@link #fitting}). {@code itemOnly}: never as a plain hint.
     */
    private void send(LockKey key, QueueState state, Collection<QueueState.Entry> recipients, long asOfMillis,
            boolean itemOnly, long keepThrough) {
        String self = endpoint.advertisedAddress();
        // The item is table data: an id of another shape than ours would put the writer's text in a plain hint.
        List<QueueState.Entry> addressed = recipients.stream()
                .filter(entry -> EntryIds.isWellFormed(entry.id()) && addressOf(state, entry) != null
                        && !addressOf(state, entry).equals(self))
                .sorted(Comparator.comparingLong(QueueState.Entry::ticket)).toList();
        if (addressed.isEmpty()) {
            return;
        }
        // The last by ticket: of a semaphore's holders, the one a release let in is the last.
        Map<String, String> addresses = new LinkedHashMap<>();
        addressed.subList(Math.max(0, addressed.size() - REMOVAL_RECIPIENTS), addressed.size())
                .forEach(entry -> addresses.put(entry.id(), addressOf(state, entry)));
        Map<String, AttributeValue> item = null;
        if (sendItems) {
            long last = recipients.stream().filter(entry -> addresses.containsKey(entry.id()))
                    .mapToLong(QueueState.Entry::ticket).max().orElseThrow();
            item = fitting(new WakeUpHint(key, addresses.keySet().iterator().next(), asOfMillis, state.item()),
                    state, Math.max(last, keepThrough));
        }
        for (Map.Entry<String, String> recipient : addresses.entrySet()) {
            endpoint.send(recipient.getValue(), new WakeUpHint(key, recipient.getKey(), asOfMillis, item, itemOnly));
        }
    }

    private static String addressOf(QueueState state, QueueState.Entry entry) {
        AttributeValue address = state.item().get(QueueState.ADDRESS_PREFIX + entry.id());
        return address == null ? null : address.s();
    }

    /**
     * The item a hint like {@code hint} carries: {@code state}'s whole item if it fits a datagram, else the state
     * cut ({@link QueueState#upTo}) as late as still fits, found by bisection, and never before ticket
     * {@code keepThrough}. A recipient's grant depends only on the entries ahead of it, so any such cut tells it as
     * much; the latest also tells it most of who left behind it (a break's news, for its own hand-over later). A cut
     * falls just before an entry, so that every ticket gone below that entry counts as gone. A long queue (about 20
     * entries) would else go as a plain hint, or not at all.
     */
    private Map<String, AttributeValue> fitting(WakeUpHint hint, QueueState state, long keepThrough) {
        if (endpoint.carriesItem(hint)) {
            return state.item();
        }
        List<QueueState.Entry> behind = state.entries().stream().filter(entry -> entry.ticket() > keepThrough)
                .toList();
        if (behind.isEmpty()) {
            return state.item(); // nothing to cut: it goes out plain, or not at all
        }
        QueueState best = state.upTo(behind.get(0).ticket() - 1);
        int fits = 0;
        int tooLong = behind.size(); // cutting before behind.size() is the whole item, which does not fit
        while (tooLong - fits > 1) {
            int mid = (fits + tooLong) >>> 1;
            QueueState cut = state.upTo(behind.get(mid).ticket() - 1);
            if (endpoint.carriesItem(new WakeUpHint(hint.key(), hint.entryId(), hint.sentAtMillis(), cut.item()))) {
                best = cut;
                fits = mid;
            }
            else {
                tooLong = mid;
            }
        }
        return best.item();
    }

    /**
     * The entries that may hold now, or once the dead ahead of them are purged, by the grant rule of
     * {@link QueueState#holds} (several readers or semaphore holders may start at once). Entries that held already
     * are among them; their processes have no waiter for them and drop the hint.
     */
    static Set<QueueState.Entry> mayHold(QueueState state, long nowMillis) {
        Set<QueueState.Entry> entries = new LinkedHashSet<>(state.holders());
        QueueState live = new QueueState(state.nextTicket(), state.ttlEpochSeconds(), state.permits(),
                state.entries().stream().filter(entry -> !entry.isExpiredAt(nowMillis)).toList());
        entries.addAll(live.holders());
        return entries;
    }

    WakeUpStats stats() {
        return new WakeUpStats(endpoint.sent(), endpoint.dropped(), endpoint.received(), endpoint.rejected(),
                useful.get());
    }

    @Override
    public void close() {
        endpoint.close();
    }
}
