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

    /**
     * The lease of {@code lock} was lost while {@code work} ran (a method, a callback, a reactive body): names every
     * entity and fencing token of the lock, since a lost part of a lock of several entities is a lost whole.
     */
    public static LockLostException whileRunning(LockHandle lock, String work) {
        return new LockLostException("The lease of lock entity='" + String.join("', '", lock.fencingTokens().keySet())
                + "' namespace='" + lock.namespace() + "' (fencing token" + (lock.parts().size() == 1 ? " "
                + lock.fencingToken() : "s " + lock.fencingTokens()) + ") was lost while " + work + " ran: its work"
                + " was not protected by the lock from then on");
    }
}
