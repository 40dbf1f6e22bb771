package io.dynamolock.core;

import java.time.Instant;

/**
 * One acquisition of this JVM: a lock it holds or waits for.
 *
 * @param entity    the locked entity
 * @param namespace the lock's namespace
 * @param owner     the owner name of the template (a label)
 * @param entryId   the queue entry's identity, random per acquisition
 * @param ticket    the entry's ticket (its fencing token once held)
 * @param holding   {@code true} when held, {@code false} while waiting
 * @param since     when it was enqueued (waiting) or granted (holding)
 * @param mode      the entry's mode
 */
public record LockInfo(String entity, String namespace, String owner, String entryId, long ticket, boolean holding,
        Instant since, LockMode mode) {
}
