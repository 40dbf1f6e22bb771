package io.dynamolock.integration;

import io.dynamolock.core.LockInterruptedException;
import io.dynamolock.core.LockLostException;
import io.dynamolock.core.LockQueueFullException;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.internal.Printable;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * One key of a {@link DynamoLockRegistry}, with the {@link java.util.concurrent.locks.Lock} rules
 * its javadoc lists. Stateless: what a thread holds is kept by the registry, so every lock
 * object of a key sees the same holds.
 */
final class RegistryLock implements DistributedLock {

    private final DynamoLockRegistry registry;
    private final String key;

    RegistryLock(DynamoLockRegistry registry, String key) {
        this.registry = registry;
        this.key = key;
    }

    @Override
    public void lock() {
        lockUninterruptibly(null);
    }

    @Override
    public void lock(Duration ttl) {
        lockUninterruptibly(requireTtl(ttl));
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        throwIfInterrupted();
        acquire(LockRequest.WAIT_FOREVER, null);
    }

    @Override
    public boolean tryLock() {
        // No wait, so an interrupt has nothing to stop; cleared because the SDK aborts an interrupted thread's request.
        boolean interrupted = Thread.interrupted();
        try {
            return tryAcquire(Duration.ZERO, null);
        }
        catch (InterruptedException ex) {
            interrupted = true;
            return false;
        }
        finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit must not be null");
        return tryLockWithin(toWait(time, unit), null);
    }

    @Override
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        Objects.requireNonNull(waitTime, "waitTime must not be null");
        return tryLockWithin(waitTime.isNegative() ? Duration.ZERO : waitTime, requireTtl(ttl));
    }

    @Override
    public void unlock() {
        DynamoLockRegistry.ThreadHold hold = registry.heldByCurrentThread(key);
        if (hold == null) {
            throw new IllegalMonitorStateException("The current thread does not hold lock '" + Printable.escape(key) + "' of "
                    + registry.describe());
        }
        if (!hold.exit()) {
            return;
        }
        boolean valid = hold.handle().isValid();
        try {
            hold.handle().release();
        }
        finally {
            registry.forget(key);
        }
        if (!valid || hold.handle().wasLost()) {
            throw new ConcurrentModificationException("Lock '" + Printable.escape(key) + "' of " + registry.describe() + " was lost"
                    + " before unlock (its lease ran out, or another process purged its entry, or an operator broke"
                    + " it): the work done under it may have overlapped with another holder's. Guard writes with the"
                    + " fencing token");
        }
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("Conditions are not supported by " + registry);
    }

    @Override
    public String toString() {
        return "DynamoLock{key='" + Printable.escape(key) + "', " + registry.describe() + "}";
    }

    private void lockUninterruptibly(Duration lease) {
        if (reenter()) {
            return;
        }
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    registry.take(key, LockRequest.WAIT_FOREVER, lease);
                    return;
                }
                catch (LockInterruptedException ex) {
                    // lock() does not give up when interrupted; the interrupt cost its place, it queues again.
                    Thread.interrupted();
                    interrupted = true;
                }
            }
        }
        finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private boolean tryLockWithin(Duration wait, Duration lease) throws InterruptedException {
        throwIfInterrupted();
        return tryAcquire(wait, lease);
    }

    /**
     * {@link #acquire}, with {@code false} for a hold found lost on re-entry and for a full queue, which has no place
     * to wait in (maxQueueLength): {@code tryLock} answers whether it got the lock, {@code lock()} throws.
     */
    private boolean tryAcquire(Duration wait, Duration lease) throws InterruptedException {
        try {
            return acquire(wait, lease);
        }
        catch (LockLostException | LockQueueFullException notTaken) {
            return false;
        }
    }

    private boolean acquire(Duration wait, Duration lease) throws InterruptedException {
        if (reenter()) {
            return true;
        }
        try {
            return registry.take(key, wait, lease);
        }
        catch (LockInterruptedException ex) {
            Thread.interrupted();
            InterruptedException interrupted = new InterruptedException(ex.getMessage());
            interrupted.initCause(ex);
            throw interrupted;
        }
    }

    /**
     * Whether the calling thread held the lock and has entered it once more.
     *
     * @throws LockLostException if it held the lock but the lease was lost: the hold is given up, so that
     *                           the thread's next attempt queues afresh
     */
    private boolean reenter() {
        DynamoLockRegistry.ThreadHold hold = registry.heldByCurrentThread(key);
        if (hold == null) {
            return false;
        }
        if (hold.handle().isValid()) {
            hold.enter();
            return true;
        }
        try {
            hold.handle().release();
        }
        finally {
            registry.forget(key);
        }
        throw new LockLostException("Lock '" + Printable.escape(key) + "' of " + registry.describe() + " was lost while this thread held"
                + " it (its lease ran out or another process purged its entry); the hold is given up, lock again to"
                + " queue afresh");
    }

    private void throwIfInterrupted() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("Interrupted before locking '" + Printable.escape(key) + "'");
        }
    }

    private static Duration requireTtl(Duration ttl) {
        return Objects.requireNonNull(ttl, "ttl must not be null; lock() takes the template's lease");
    }

    /** A {@code Lock} wait as a duration: none when not positive, forever when too long for a Duration. */
    private static Duration toWait(long time, TimeUnit unit) {
        if (time <= 0) {
            return Duration.ZERO;
        }
        try {
            return Duration.of(time, unit.toChronoUnit());
        }
        catch (ArithmeticException tooLong) {
            return LockRequest.WAIT_FOREVER;
        }
    }
}
