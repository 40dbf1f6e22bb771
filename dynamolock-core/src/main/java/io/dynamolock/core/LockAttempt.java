package io.dynamolock.core;

/**
 * One acquisition as a {@link LockListener} hears of it: {@link LockListener#onAcquiring} receives it, and the
 * outcome ({@code onAcquired}, {@code onNotAcquired} or {@code onFailed}) receives the same value, on whatever
 * thread that outcome is reported. A listener pairs the start of an acquisition with its end by this value
 * (e.g. as a map key), never by thread: an {@code acquireAsync} starts on the caller's thread and ends on a
 * dynamolock thread.
 *
 * @param entryId   the identity of the acquisition's queue entry (random per acquisition, as
 *                  {@link LockHandle#entryId()} of the lock it may be granted)
 * @param entity    the entity asked for (one per attempt: a request for several entities makes one attempt each)
 * @param namespace the lock's namespace
 * @param mode      the mode asked for
 * @param permits   the permits asked for (1 but for a semaphore)
 */
public record LockAttempt(String entryId, String entity, String namespace, LockMode mode, int permits) {
}
