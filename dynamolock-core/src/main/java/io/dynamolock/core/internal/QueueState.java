package io.dynamolock.core.internal;

import io.dynamolock.core.QueueSnapshot;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * One lock item as DynamoDB returned it: the ticket counter and the queue, sorted by
 * ticket. Every protocol request returns the whole item, so every response is an
 * exact picture of the queue at the instant of that write.
 */
final class QueueState {

    static final String NEXT = "next";
    static final String TICKET_PREFIX = "t#";
    static final String EXPIRY_PREFIX = "e#";

    /** A queue entry: {@code expiresAtMillis} is the owner's wall clock at its last renewal plus its lease. */
    record Entry(String owner, long ticket, long expiresAtMillis) {

        boolean isExpiredAt(long nowMillis) {
            return expiresAtMillis <= nowMillis;
        }
    }

    static final QueueState ABSENT = new QueueState(0, List.of());

    private final long nextTicket;
    private final List<Entry> entries;

    private QueueState(long nextTicket, List<Entry> entries) {
        this.nextTicket = nextTicket;
        this.entries = entries;
    }

    static QueueState of(Map<String, AttributeValue> item) {
        if (item == null || item.isEmpty()) {
            return ABSENT;
        }
        List<Entry> entries = new ArrayList<>();
        item.forEach((name, value) -> {
            if (name.startsWith(TICKET_PREFIX)) {
                String owner = name.substring(TICKET_PREFIX.length());
                AttributeValue expiry = item.get(EXPIRY_PREFIX + owner);
                entries.add(new Entry(owner, Long.parseLong(value.n()), expiry == null ? 0 : Long.parseLong(expiry.n())));
            }
        });
        entries.sort(Comparator.comparingLong(Entry::ticket));
        AttributeValue next = item.get(NEXT);
        return new QueueState(next == null ? 0 : Long.parseLong(next.n()), List.copyOf(entries));
    }

    long nextTicket() {
        return nextTicket;
    }

    List<Entry> entries() {
        return entries;
    }

    Entry entry(String owner) {
        for (Entry entry : entries) {
            if (entry.owner().equals(owner)) {
                return entry;
            }
        }
        return null;
    }

    /** The entries with a lower ticket, the holder first. Only ever shrinks for a given ticket. */
    List<Entry> ahead(long ticket) {
        List<Entry> ahead = new ArrayList<>();
        for (Entry entry : entries) {
            if (entry.ticket() < ticket) {
                ahead.add(entry);
            }
        }
        return ahead;
    }

    QueueSnapshot toSnapshot(String entity, String namespace) {
        return new QueueSnapshot(entity, namespace, nextTicket, entries.stream()
                .map(e -> new QueueSnapshot.Entry(e.owner(), e.ticket(), Instant.ofEpochMilli(e.expiresAtMillis())))
                .toList());
    }

    @Override
    public String toString() {
        return "QueueState[next=" + nextTicket + ", entries=" + entries + "]";
    }
}
