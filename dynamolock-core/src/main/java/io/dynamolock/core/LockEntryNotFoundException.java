package io.dynamolock.core;

/**
 * {@link LockTemplate#breakLock} found no entry with the given ticket in the lock's queue: it was released or
 * broken meanwhile, the lock has no queue, or the ticket was mistyped. Nothing was removed; the message lists
 * the tickets the queue holds.
 */
public class LockEntryNotFoundException extends DynamoLockException {

    public LockEntryNotFoundException(String message) {
        super(message);
    }
}
