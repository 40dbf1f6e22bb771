package io.dynamolock.core;

/**
 * The caller's lease ended while it held (or waited for) the lock: its entry was
 * purged by another process after the lease expired, broken by an operator
 * ({@link LockTemplate#breakLock}), or it could not be renewed in time. Whatever was done under the lock since then was not protected; writes
 * should be guarded by the {@linkplain LockHandle#fencingToken() fencing token}.
 */
public class LockLostException extends DynamoLockException {

    public LockLostException(String message) {
        super(message);
    }

    public LockLostException(String message, Throwable cause) {
        super(message, cause);
    }
}
