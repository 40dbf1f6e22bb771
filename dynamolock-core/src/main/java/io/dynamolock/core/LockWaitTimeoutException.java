package io.dynamolock.core;

import io.dynamolock.core.internal.Printable;
import java.time.Duration;
import java.util.List;

/**
 * The caller waited as long as it was allowed to and the lock was still taken.
 * Its queue entry has been removed: nothing of it is left in the table. When
 * DynamoDB is slow to answer the removal, the time-out is thrown half a second
 * after the wait ended at most, and the entry leaves in the background: a
 * removal that fails is retried, and a fail-open entry left behind is purged one
 * lease later, as a crashed caller's would be.
 */
public class LockWaitTimeoutException extends DynamoLockException {

    private final String entity;
    private final String namespace;
    private final Duration waited;
    private final int position;
    private final List<String> ownersAhead;
    private final String hint;

    public LockWaitTimeoutException(String entity, String namespace, Duration waited, int position,
            List<String> ownersAhead) {
        this(entity, namespace, waited, position, ownersAhead, null);
    }

    /** @param hint what else the caller should know, e.g. that it waited behind its own thread; may be null */
    public LockWaitTimeoutException(String entity, String namespace, Duration waited, int position,
            List<String> ownersAhead, String hint) {
        super("Timed out after " + waited.toMillis() + " ms waiting for lock entity='" + Printable.escape(entity)
                + "' namespace='" + Printable.escape(namespace) + "': " + position + " "
                + (position == 1 ? "entry" : "entries") + " still ahead in the queue "
                + Printable.escapeAll(ownersAhead)
                + ". " + (hint != null ? hint : "Raise the wait, or shorten the work done under the lock."));
        this.entity = entity;
        this.namespace = namespace;
        this.waited = waited;
        this.position = position;
        this.ownersAhead = List.copyOf(ownersAhead);
        this.hint = hint;
    }

    public String entity() {
        return entity;
    }

    public String namespace() {
        return namespace;
    }

    /** How long the caller waited before giving up. */
    public Duration waited() {
        return waited;
    }

    /** Number of queue entries (alive or silent) that were still ahead of the caller. */
    public int position() {
        return position;
    }

    /** Owners of the entries ahead of the caller, the holder first. */
    public List<String> ownersAhead() {
        return ownersAhead;
    }

    /**
     * What else the caller should know, as the message says it (a silent fail-closed entry ahead and how to break
     * it, a wait behind its own thread), or {@code null}.
     */
    public String hint() {
        return hint;
    }
}
