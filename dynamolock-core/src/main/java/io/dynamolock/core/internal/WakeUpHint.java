package io.dynamolock.core.internal;

import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A wake-up hint: a process that removed entries from a lock's queue (a release, a purge) tells the process of an
 * entry that may now hold, so that its waiter need not wait for its next poll.
 *
 * @param key          the lock
 * @param entryId      the addressee: the id of the entry that may now hold
 * @param sentAtMillis the sender's wall clock when the hint's news was true: when it sent a hint of its own write,
 *                     when it learned the state it hands over; a receiver drops hints older than its freshness
 *                     window (a delayed or replayed one, or a hand-over of an old state)
 * @param item         the lock item exactly as the sender's write returned it (or as its holder knows it, for a
 *                     hand-over; cut after the addressee when the whole is too long for a datagram), or
 *                     {@code null} for a plain hint. Only an authenticated hint carries it: the receiver may then
 *                     act on it as on a same-JVM handoff, since the returned item is a linearizable read and
 *                     entries ahead of a ticket only disappear. Without the lock's key attributes ({@code pk}, {@code sk}): {@code key} says
 *                     which lock it is, under the same HMAC
 * @param itemOnly     whether the hint is worth sending only with its item: a hand-over's, sent before the release
 *                     lands, which a plain hint would only make read a queue that still shows the releaser
 */
record WakeUpHint(LockKey key, String entryId, long sentAtMillis, Map<String, AttributeValue> item,
        boolean itemOnly) {

    WakeUpHint {
        item = item == null ? null : Map.copyOf(item);
    }

    WakeUpHint(LockKey key, String entryId, long sentAtMillis, Map<String, AttributeValue> item) {
        this(key, entryId, sentAtMillis, item, false);
    }

    /** The same hint without the item: what is sent when the item does not fit a datagram. */
    WakeUpHint plain() {
        return item == null ? this : new WakeUpHint(key, entryId, sentAtMillis, null);
    }
}
