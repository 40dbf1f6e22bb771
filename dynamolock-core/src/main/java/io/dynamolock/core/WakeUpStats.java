package io.dynamolock.core;

/**
 * What a template's wake-up hints did since it was built (all zero when they are off). A snapshot.
 *
 * @param sent     datagrams sent
 * @param dropped  hints not sent: the send queue was full, the address unusable, or the hint too long
 * @param received datagrams received, valid or not
 * @param rejected datagrams received and rejected: garbage, truncated, oversized, another version, a bad or
 *                 missing HMAC, too old
 * @param useful   hints that let a waiter take the lock or read the queue earlier than its poll schedule
 */
public record WakeUpStats(long sent, long dropped, long received, long rejected, long useful) {

    /** No hints: the figures of a template without wake-up hints. */
    public static final WakeUpStats NONE = new WakeUpStats(0, 0, 0, 0, 0);
}
