package io.dynamolock.core;

import java.time.Instant;
import java.util.List;

/**
 * A lock's queue as stored in DynamoDB at one instant, in ticket order: the first
 * live entry holds the lock.
 *
 * @param entity     the locked entity
 * @param namespace  the lock's namespace
 * @param nextTicket the ticket the next caller will get, or 0 when the lock has no item
 * @param entries    the queue, lowest ticket first
 */
public record QueueSnapshot(String entity, String namespace, long nextTicket, List<Entry> entries) {

    public QueueSnapshot {
        entries = List.copyOf(entries);
    }

    /**
     * One queue entry.
     *
     * @param entryId        the entry's identity, random per acquisition
     * @param owner          the owner name of the template that made it (a label for people)
     * @param ticket         its ticket
     * @param leaseExpiresAt when its lease ends unless renewed
     */
    public record Entry(String entryId, String owner, long ticket, Instant leaseExpiresAt) {
    }
}
