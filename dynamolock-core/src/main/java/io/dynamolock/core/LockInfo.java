package io.dynamolock.core;

import java.time.Instant;

/**
 * One acquisition of this JVM: a lock it holds or waits for.
 *
 * @param entity    the locked entity
 * @param namespace the lock's namespace
 * @param owner     the queue entry's owner
 * @param ticket    the entry's ticket (its fencing token once held)
 * @param holding   {@code true} when held, {@code false} while waiting
 * @param since     when it was enqueued (waiting) or granted (holding)
 */
public record LockInfo(String entity, String namespace, String owner, long ticket, boolean holding, Instant since) {
}
