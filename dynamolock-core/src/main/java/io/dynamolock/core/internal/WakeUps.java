package io.dynamolock.core.internal;

import io.dynamolock.core.WakeUpOptions;
import io.dynamolock.core.WakeUpStats;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Wake-up hints of one template: the entries it enqueues carry its address ({@code w#<id>} in the item); when it
 * removes entries (a release, a purge) it sends a hint, with the item as its write returned it, to the process of
 * each entry that may now hold; hints it receives go to its waiters.
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
 * random per acquisition), and a hint for another lock than the addressee's is dropped.</li>
 * </ul>
 */
final class WakeUps implements AutoCloseable {

    /** How old a received hint may be; a slower one is worth no more than the next poll. */
    static final Duration FRESHNESS = Duration.ofSeconds(10);

    /** A waiter, as hints reach it. */
    interface Addressee {

        LockKey key();

        /** An authenticated hint's state: treat as a same-JVM release's. */
        void wokenWith(QueueState state);

        /** A plain hint: read the queue now, unless a hint made it read since its last poll already. */
        void woken();
    }

    private final HintEndpoint endpoint;
    private final Clock clock;
    private final Map<String, Addressee> waiting = new ConcurrentHashMap<>();
    private final AtomicLong useful = new AtomicLong();
    private final boolean sendItems;

    WakeUps(WakeUpOptions options, Clock clock) {
        this.clock = clock;
        byte[] secret = options.secret();
        this.sendItems = secret != null;
        this.endpoint = new HintEndpoint(new InetSocketAddress(options.bindAddress(), options.port()),
                options.advertisedAddress(), new HintCodec(secret, clock, FRESHNESS), this::deliver);
    }

    /** Where others send this template's hints: what its entries carry. */
    String address() {
        return endpoint.advertisedAddress();
    }

    void register(String entryId, Addressee addressee) {
        waiting.put(entryId, addressee);
    }

    void unregister(String entryId) {
        waiting.remove(entryId);
    }

    /** A hint let a waiter take the lock or read earlier than its schedule. */
    void countUseful() {
        useful.incrementAndGet();
    }

    private void deliver(WakeUpHint hint) {
        Addressee addressee = waiting.get(hint.entryId());
        if (addressee == null || !addressee.key().equals(hint.key())) {
            return; // granted, gone, or a hint of another lock: nothing to wake
        }
        if (hint.item() != null) {
            addressee.wokenWith(QueueState.of(hint.item()));
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
        long now = clock.millis();
        String self = endpoint.advertisedAddress();
        for (QueueState.Entry entry : mayHold(state, now)) {
            AttributeValue address = item.get(QueueState.ADDRESS_PREFIX + entry.id());
            if (address != null && address.s() != null && !address.s().equals(self)) {
                endpoint.send(address.s(), new WakeUpHint(key, entry.id(), now, sendItems ? item : null));
            }
        }
    }

    /**
     * The entries that may hold now, or once the dead ahead of them are purged, by the grant rule of
     * {@link QueueState#holds} (several readers or semaphore holders may start at once). Entries that held already
     * are among them; their processes have no waiter for them and drop the hint.
     */
    static Set<QueueState.Entry> mayHold(QueueState state, long nowMillis) {
        Set<QueueState.Entry> entries = new LinkedHashSet<>();
        state.entries().stream().filter(state::holds).forEach(entries::add);
        QueueState live = new QueueState(state.nextTicket(), state.ttlEpochSeconds(), state.permits(),
                state.entries().stream().filter(entry -> !entry.isExpiredAt(nowMillis)).toList());
        live.entries().stream().filter(live::holds).forEach(entries::add);
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
