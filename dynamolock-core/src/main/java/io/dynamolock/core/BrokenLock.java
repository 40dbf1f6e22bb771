package io.dynamolock.core;

/**
 * What {@link LockTemplate#breakLock} removed from a lock's queue. The entry's holder, if its process still
 * runs, learns it at its next heartbeat ({@link LockHandle#isValid()} turns false, its lost-lease callbacks
 * run), and its fencing token is lower than the next holder's, so a fenced write of its own is rejected.
 *
 * @param entity    the locked entity
 * @param namespace the lock's namespace
 * @param entry     the entry exactly as the break's write removed it: owner, ticket, lease end, mode. If its holder
 *                  renewed it after the break read the queue, this is the renewed lease end (the entry was alive
 *                  when removed), not the one read before
 */
public record BrokenLock(String entity, String namespace, QueueSnapshot.Entry entry) {
}
