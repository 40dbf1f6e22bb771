package io.dynamolock.core;

import io.dynamolock.core.internal.Printable;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * The caller's lease ended while it held (or waited for) the lock: its entry was
 * purged by another process after the lease expired, broken by an operator
 * ({@link LockTemplate#breakLock}), or it could not be renewed in time. Whatever was done under the lock since then was not protected; writes
 * should be guarded by the {@linkplain LockHandle#fencingToken() fencing token}.
 */
public class LockLostException extends DynamoLockException {

    /** Exceptions that only carry another on its way out; Reactor's is named, as the core does not depend on it. */
    private static final Set<String> WRAPPERS = Set.of(CompletionException.class.getName(),
            ExecutionException.class.getName(), UndeclaredThrowableException.class.getName(),
            InvocationTargetException.class.getName(), "reactor.core.Exceptions$ReactiveException");

    private final boolean granted;
    /** The lost lock's namespace, or {@code null} when this loss names no lock (see {@link #isLossOf}). */
    private final String namespace;
    /** The lost lock's fencing token of each entity; empty when this loss names no lock. */
    private final Map<String, Long> fencingTokens;

    public LockLostException(String message) {
        super(message);
        this.granted = true;
        this.namespace = null;
        this.fencingTokens = Map.of();
    }

    /**
     * A loss made from {@code cause}: if that is, or was made from, a loss naming its lock ({@link #whileRunning}),
     * this one names the same lock, so that a copy (kotlinx's stack trace recovery makes one with this constructor)
     * or a wrap of a loss stays the loss of its lock.
     */
    public LockLostException(String message, Throwable cause) {
        super(message, cause);
        this.granted = true;
        LockLostException named = namingALock(cause);
        this.namespace = named == null ? null : named.namespace;
        this.fencingTokens = named == null ? Map.of() : named.fencingTokens;
    }

    private LockLostException(String message, boolean granted) {
        super(message);
        this.granted = granted;
        this.namespace = null;
        this.fencingTokens = Map.of();
    }

    private LockLostException(String message, LockHandle lock) {
        super(message);
        this.granted = true;
        this.namespace = lock.namespace();
        this.fencingTokens = Map.copyOf(lock.fencingTokens());
    }

    private static LockLostException namingALock(Throwable thrown) {
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable cause = thrown; cause != null && seen.add(cause); cause = cause.getCause()) {
            if (cause instanceof LockLostException lost && lost.namespace != null) {
                return lost;
            }
        }
        return null;
    }

    /**
     * An acquisition lost its place before the lock was granted to it (its entry was purged or broken while it
     * waited, a lease ran out at the grant): the work it was for never ran under the lock ({@link #wasGranted()}).
     */
    public static LockLostException beforeGrant(String message) {
        return new LockLostException(message, false);
    }

    /**
     * {@code thrown}, as the caller of work that ran under a lock must see it: that work ran (and may have written),
     * so a loss before the grant of some acquisition nested in it ({@code wasGranted()} false there), thrown as it is
     * or wrapped on its way out (a {@code CompletionException} of a {@code join()}, an {@code ExecutionException}, a
     * reflective call's), reaches the caller as a granted loss, with {@code thrown} as its cause. Anything else is
     * passed on as it is: a cancellation, and an exception of the work's own that merely has a loss as its cause
     * (the application chose what to throw).
     */
    public static Throwable escapingWork(Throwable thrown) {
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable cause = thrown; cause != null && seen.add(cause); cause = cause.getCause()) {
            if (cause instanceof LockLostException lost) {
                return lost.wasGranted() ? thrown
                        : new LockLostException("Work that ran under a lock failed: " + lost.getMessage(), thrown);
            }
            if (!WRAPPERS.contains(cause.getClass().getName())) {
                return thrown;
            }
        }
        return thrown;
    }

    /**
     * Whether work may have run under the lock before the loss: {@code false} only when the acquisition called never
     * got the lock and no work of the caller's ran under it (thrown by {@code acquire}, or by {@code execute} or a
     * {@code @QueueLocked} method before their work began), so the work can be retried as it is; {@code true}
     * otherwise, and a caller should check what was done before retrying.
     */
    public boolean wasGranted() {
        return granted;
    }

    /**
     * The lease of {@code lock} was lost while {@code work} ran (a method, a callback, a reactive body): names every
     * entity and fencing token of the lock, since a lost part of a lock of several entities is a lost whole.
     */
    public static LockLostException whileRunning(LockHandle lock, String work) {
        return new LockLostException("The lease of lock entity='" + String.join("', '",
                Printable.escapeAll(lock.fencingTokens().keySet())) + "' namespace='"
                + Printable.escape(lock.namespace()) + "' (fencing token" + (lock.parts().size() == 1 ? " "
                + lock.fencingToken() : "s " + lock.fencingTokens()) + ") was lost while " + work + " ran: its work"
                + " was not protected by the lock from then on", lock);
    }

    /**
     * Whether this is the loss of {@code lock}: made by {@link #whileRunning} for it, or for another handle of the same
     * hold (a nested call that joined it), i.e. of the same namespace, entities and fencing tokens, or made from such a
     * loss. Lets the caller of work that failed with a loss tell whether its own lock's loss is reported already, or
     * must be added (the work failed with the loss of a nested lock of another entity). {@code true} also for a loss
     * that names no lock (made with a message only, by the application or a library), since which lock it is of
     * cannot be told: taken as reported already rather than reported twice.
     */
    public boolean isLossOf(LockHandle lock) {
        return namespace == null
                || namespace.equals(lock.namespace()) && fencingTokens.equals(lock.fencingTokens());
    }
}
