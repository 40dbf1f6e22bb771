package io.dynamolock.core;

import java.time.Instant;
import java.util.List;

/**
 * A lock's queue as stored in DynamoDB at one instant, in ticket order. An exclusive entry holds the lock when
 * fewer than {@code permits} live entries are ahead of it (none, for a plain lock); a shared one when every
 * live entry ahead is shared.
 *
 * @param entity     the locked entity
 * @param namespace  the lock's namespace
 * @param nextTicket the ticket the next caller will get, or 0 when the lock has no item
 * @param permits    the permits the item was set up with ({@link LockRequest#permits()}), 1 when it has none
 * @param entries    the queue, lowest ticket first
 */
public record QueueSnapshot(String entity, String namespace, long nextTicket, int permits, List<Entry> entries) {

    public QueueSnapshot {
        entries = List.copyOf(entries);
    }

    /**
     * One queue entry.
     *
     * <p>An entry whose lease end is past has not been renewed for a whole lease: its process is dead, stopped,
     * or cut off from DynamoDB. An ordinary entry is then purged by the next waiter; a {@linkplain #failClosed()
     * fail-closed} one stays, silent since {@code lastRenewedAt}, until it is released or broken
     * ({@link LockTemplate#breakLock}).
     *
     * @param entryId        the entry's identity, random per acquisition
     * @param owner          the owner name of the template that made it (a label for people)
     * @param ticket         its ticket
     * @param leaseExpiresAt when its lease ends unless renewed (the writer's clock at its last renewal plus its
     *                       lease)
     * @param failClosed     whether the entry never expires by lease ({@link LockRequest#failClosed()})
     * @param lastRenewedAt  for a fail-closed entry, when its holder last renewed it (by its clock); {@code null}
     *                       for an ordinary entry, whose lease the item does not store
     * @param mode           the entry's mode
     */
    public record Entry(String entryId, String owner, long ticket, Instant leaseExpiresAt, boolean failClosed,
            Instant lastRenewedAt, LockMode mode) {

        /** Whether the entry's lease has ended at {@code now}: nothing renewed it for a whole lease. */
        public boolean isSilentAt(Instant now) {
            return !leaseExpiresAt.isAfter(now);
        }
    }
}
