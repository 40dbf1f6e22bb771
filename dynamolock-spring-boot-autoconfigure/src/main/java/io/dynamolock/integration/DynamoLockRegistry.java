package io.dynamolock.integration;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.LockWaitTimeoutException;
import io.dynamolock.core.internal.Printable;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * A Spring Integration {@link org.springframework.integration.support.locks.LockRegistry} on a
 * dynamolock {@link LockTemplate}: aggregators, {@code LockRegistryLeaderInitiator} and
 * {@code executeLocked} get FIFO-fair, heartbeated locks on DynamoDB. A lock key is the locked
 * entity, in this registry's namespace (by default the template's).
 *
 * <p>The {@link Lock} rules are those of Spring Integration's JDBC and Redis registries:
 * <ul>
 * <li>A lock is held by a thread and is re-entrant for that thread: a thread that holds it and
 * locks it again (through the same or another {@link #obtain} result) only counts, and the
 * last {@link Lock#unlock()} leaves the queue. Unlock by a thread that does not hold it throws
 * {@link IllegalMonitorStateException}.</li>
 * <li>Every thread that waits is an entry of its own in the lock's DynamoDB queue, so threads
 * of all processes are served in the order they asked, and fencing tokens rise in that order.</li>
 * <li>{@code tryLock()} and {@code tryLock(0, unit)} take the lock only if no one is queued
 * ahead; {@code tryLock(time, unit)} waits in the queue at most {@code time};
 * {@code lockInterruptibly()} leaves the queue and throws {@link InterruptedException} when
 * interrupted; {@code lock()} keeps waiting when interrupted (the interrupt costs its place in
 * the queue, which it joins again at the end) and restores the interrupt status on return.</li>
 * <li>{@link Lock#newCondition()} throws {@link UnsupportedOperationException}.</li>
 * <li>If the lease was lost while held (renewals failed for a whole lease, or another process
 * purged the entry), the last {@code unlock()} leaves the queue and then throws
 * {@link java.util.ConcurrentModificationException}: the work done under the lock may have
 * overlapped with another holder's. A thread that tries to lock again while its hold is lost
 * gets {@code false} from {@code tryLock}, or a {@link io.dynamolock.core.LockLostException}
 * from {@code lock}; its hold is then given up (further {@code unlock()} calls throw
 * {@link IllegalMonitorStateException}), so that its next attempt queues afresh.</li>
 * </ul>
 *
 * <p>Leases are renewed by the template's heartbeats as long as the lock is held, so
 * {@link #renewLock(Object)} has nothing to extend: it checks that the calling thread holds the
 * lock and that its lease is still valid. The lease is fixed when the lock is taken
 * ({@link DistributedLock#lock(Duration)}, {@link DistributedLock#tryLock(Duration, Duration)},
 * or the template's lease by default).
 *
 * <p>Lock objects keep no state: what a thread holds is kept here until it unlocks, or, if it
 * ends holding the lock, until a thread of this registry is next granted a lock (not a re-entry)
 * or gives one up (its last unlock of a key), or until {@link #close()}; an attempt that does not
 * get the lock leaves the claim. So memory grows with the locks held, not with the keys ever used or the
 * threads that ever locked, and {@link #expireUnusedOlderThan} has nothing to remove.
 */
public final class DynamoLockRegistry
        implements ExpirableLockRegistry<DistributedLock>, RenewableLockRegistry<DistributedLock>, AutoCloseable {

    /** How long {@link #close()} waits by default for threads to unlock what they hold. */
    public static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(10);

    /** How often {@link #close()} looks for holders that ended: an ending thread wakes nobody. */
    private static final long ENDED_HOLDER_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final LockTemplate locks;
    private final String namespace;
    private final Duration closeTimeout;
    private final ConcurrentMap<Claim, ThreadHold> holds = new ConcurrentHashMap<>();
    private final Object released = new Object();
    private volatile boolean closed;

    /** A registry of locks in the template's default namespace. */
    public DynamoLockRegistry(LockTemplate locks) {
        this(locks, null, DEFAULT_CLOSE_TIMEOUT);
    }

    /**
     * @param locks        the template that takes the locks
     * @param namespace    the namespace of this registry's locks, or {@code null} for the template's default
     * @param closeTimeout how long {@link #close()} waits for threads to unlock what they hold
     */
    public DynamoLockRegistry(LockTemplate locks, String namespace, Duration closeTimeout) {
        this.locks = Objects.requireNonNull(locks, "locks must not be null");
        this.namespace = namespace;
        this.closeTimeout = Objects.requireNonNull(closeTimeout, "closeTimeout must not be null");
        if (closeTimeout.isNegative()) {
            throw new IllegalArgumentException("closeTimeout " + closeTimeout + " is negative; use Duration.ZERO"
                    + " not to wait for held locks at close");
        }
    }

    /**
     * The lock of {@code lockKey}, which must be a {@link String}: the entity locked in DynamoDB.
     *
     * @throws IllegalArgumentException if the key is not a string
     */
    @Override
    public DistributedLock obtain(Object lockKey) {
        return new RegistryLock(this, requireKey(lockKey));
    }

    /**
     * Does nothing: lock objects hold no state, and a lock is forgotten when its last holder
     * unlocks it. Present so that code written for other registries, which calls it on a
     * schedule, works unchanged.
     */
    @Override
    public void expireUnusedOlderThan(long age) {
    }

    /**
     * Checks that the calling thread holds the lock of {@code lockKey} and that its lease is
     * valid; the template's heartbeats renew it already.
     *
     * @throws IllegalMonitorStateException if the thread does not hold the lock
     * @throws IllegalStateException        if its lease was lost
     */
    @Override
    public void renewLock(Object lockKey) {
        String key = requireKey(lockKey);
        ThreadHold hold = heldByCurrentThread(key);
        if (hold == null) {
            throw new IllegalMonitorStateException("The current thread does not hold lock '" + Printable.escape(key) + "' of "
                    + describe() + "; only a holder can renew it");
        }
        if (!hold.handle().isValid()) {
            throw new IllegalStateException("Could not renew lock '" + Printable.escape(key) + "' of " + describe() + ": its lease was"
                    + " lost (renewals failed for a whole lease, or another process purged the entry)");
        }
    }

    /**
     * As {@link #renewLock(Object)}; a lease cannot change while held, so {@code ttl} must be the
     * lease the lock was taken with.
     *
     * @throws UnsupportedOperationException if {@code ttl} differs from the lease of the hold
     */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        Objects.requireNonNull(ttl, "ttl must not be null");
        renewLock(lockKey);
        ThreadHold hold = heldByCurrentThread((String) lockKey);
        if (!hold.lease().equals(ttl)) {
            throw new UnsupportedOperationException("Lock '" + Printable.escape(String.valueOf(lockKey)) + "' was taken with a lease of " + hold.lease()
                    + " and is renewed every heartbeat with it; it cannot change to " + ttl + " while held. Take the"
                    + " lock with lock(ttl) or tryLock(wait, ttl) for another lease");
        }
    }

    /**
     * Refuses new locks and waits up to the close timeout for threads to unlock what they hold
     * (a leader initiator stopping, for instance), so that the next waiter gets those locks at
     * once rather than after the lease. Locks still held then stay held until unlocked, or
     * expire after the lease once the template is closed. A thread that ended holding a lock can
     * never unlock it, so it is not waited for: its lock passes on after its lease, as the
     * template stops renewing it.
     */
    @Override
    public void close() {
        closed = true;
        // Capped: a timeout as long as LockRequest.WAIT_FOREVER overflows toNanos(); half of it is 146 years.
        long deadline = System.nanoTime() + Math.min(closeTimeout.toSeconds(), Long.MAX_VALUE / 2_000_000_000L)
                * 1_000_000_000L + closeTimeout.toNanosPart();
        boolean interrupted = false;
        synchronized (released) {
            long remaining;
            while (heldByLiveThreads() && (remaining = deadline - System.nanoTime()) > 0) {
                try {
                    TimeUnit.NANOSECONDS.timedWait(released, Math.min(remaining, ENDED_HOLDER_CHECK_NANOS));
                }
                catch (InterruptedException ex) {
                    interrupted = true;
                    break;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "DynamoLockRegistry{" + describe() + "}";
    }

    String describe() {
        return "namespace '" + Printable.escape(namespace()) + "' of table '" + locks.tableName() + "'";
    }

    String namespace() {
        return namespace != null ? namespace : locks.defaultNamespace();
    }

    /** Whether the calling thread's scope holds {@code key} of this registry's namespace (the registry's own do not). */
    private boolean heldThroughScope(String key) {
        String ns = namespace();
        return locks.currentScope().locks().stream().flatMap(lock -> lock.parts().stream())
                .anyMatch(part -> part.entity().equals(key) && part.namespace().equals(ns) && part.isValid());
    }

    /**
     * Takes a new hold on {@code key} for the calling thread, waiting at most {@code wait}; {@code false} if
     * the wait ran out.
     *
     * @param lease the lease, or {@code null} for the template's
     * @throws io.dynamolock.core.LockInterruptedException if the thread was interrupted while it waited
     */
    boolean take(String key, Duration wait, Duration lease) {
        if (closed) {
            throw new IllegalStateException(this + " is closed; it takes no new locks");
        }
        if (!wait.isZero() && heldThroughScope(key)) {
            // Lock#lock() allows an implementation to refuse a call that would deadlock: this one would.
            throw new IllegalStateException("The calling thread holds lock entity='" + Printable.escape(key)
                    + "' namespace='" + Printable.escape(namespace()) + "' already, through its scope (@QueueLocked or LockTemplate), so a registry lock"
                    + " on the same key would wait for itself for ever. Use the lock the scope holds, or take the"
                    + " registry lock outside that scope");
        }
        LockRequest.Builder request = LockRequest.builder(key).namespace(namespace).wait(wait)
                // Re-entry is counted here, per thread: the core's handle belongs to the handle, not the thread.
                .reentrant(false)
                // Only this thread unlocks it: a scope of this thread on the key is refused, not left waiting.
                .threadBound(true);
        if (lease != null) {
            request.lease(lease);
        }
        LockHandle handle;
        if (wait.isZero()) {
            handle = locks.tryAcquire(request.build()).orElse(null);
        }
        else {
            try {
                handle = locks.acquire(request.build());
            }
            catch (LockWaitTimeoutException ex) {
                handle = null;
            }
        }
        if (handle == null) {
            return false;
        }
        forgetEndedHolders();
        holds.put(new Claim(Thread.currentThread(), key),
                new ThreadHold(handle, lease != null ? lease : locks.leaseDuration()));
        // Checked after the put: a close() that began while this thread waited either waits for this hold or is
        // seen here, and the lock goes to the next in line now, not to an instance that is shutting down.
        if (closed) {
            try {
                handle.release();
            }
            finally {
                forget(key);
            }
            throw new IllegalStateException(this + " was closed while this thread waited for '"
                    + Printable.escape(key) + "'; the lock"
                    + " was handed on");
        }
        return true;
    }

    ThreadHold heldByCurrentThread(String key) {
        return holds.get(new Claim(Thread.currentThread(), key));
    }

    /** How many thread-and-key claims are kept: what the registry's memory grows with. */
    int claims() {
        return holds.size();
    }

    /** The calling thread gives up its hold on {@code key}; the caller releases the handle. */
    void forget(String key) {
        holds.remove(new Claim(Thread.currentThread(), key));
        if (!heldByLiveThreads()) {
            synchronized (released) {
                released.notifyAll();
            }
        }
    }

    /** Whether any thread still holds a lock of this registry, once the claims of ended threads are dropped. */
    private boolean heldByLiveThreads() {
        forgetEndedHolders();
        return !holds.isEmpty();
    }

    /**
     * Drops the claims of threads that ended holding them: only the holding thread may unlock (re-entry is counted
     * per thread), so nobody ever will, and kept they would hold the thread and its handle for ever. The template
     * stops renewing such a lock, which then passes on as after a process death. A thread that has ended never runs
     * again, so a live thread's claim is never dropped.
     */
    private void forgetEndedHolders() {
        holds.keySet().removeIf(claim -> !claim.thread().isAlive());
    }

    private static String requireKey(Object lockKey) {
        if (lockKey instanceof String key) {
            return key;
        }
        throw new IllegalArgumentException("lockKey must be a String (the locked entity), not "
                + (lockKey == null ? "null" : lockKey.getClass().getName() + " '"
                        + Printable.escape(String.valueOf(lockKey)) + "'")
                + "; pass String.valueOf(key)");
    }

    /** One thread's claim on one key. */
    private record Claim(Thread thread, String key) {
    }

    /**
     * What a thread holds: the core's handle and how often the thread entered. Only the holding
     * thread reads or changes {@code count}.
     */
    static final class ThreadHold {

        private final LockHandle handle;
        private final Duration lease;
        private int count = 1;

        ThreadHold(LockHandle handle, Duration lease) {
            this.handle = handle;
            this.lease = lease;
        }

        LockHandle handle() {
            return handle;
        }

        Duration lease() {
            return lease;
        }

        void enter() {
            count++;
        }

        /** Leaves once; {@code true} when that was the last hold. */
        boolean exit() {
            return --count == 0;
        }
    }
}
