package io.dynamolock.core;

/**
 * How an entry shares its lock with the entries ahead of it in the queue ({@link LockRequest.Builder#mode}).
 * Queue order is ticket order whatever the mode, so neither mode can starve the other: a writer behind readers
 * waits for them, and readers behind a waiting writer wait for it.
 */
public enum LockMode {

    /**
     * The default. Holds when fewer than {@linkplain LockRequest#permits() permits} live entries are ahead:
     * with one permit (a plain lock, the write side of a read/write lock) when nobody is ahead; with N permits
     * (a semaphore) when fewer than N are.
     */
    EXCLUSIVE,

    /** The read side of a read/write lock: holds when every live entry ahead is shared as well. */
    SHARED
}
