package io.dynamolock.core.internal;

import io.dynamolock.core.LockOptionException;
import io.dynamolock.core.LockRequest;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RejectedExecutionException;

/** The three kinds of wait: none, bounded, forever. */
final class Waits {

    private Waits() {
    }

    static Duration requireValid(Duration wait, String name) {
        if (wait == null) {
            throw new LockOptionException(name, null, name + " must not be null; use LockRequest.NO_WAIT for no wait or"
                    + " LockRequest.WAIT_FOREVER to wait as long as it takes");
        }
        if (wait.isNegative()) {
            throw new LockOptionException(name, wait, name + " " + wait + " is negative; use LockRequest.NO_WAIT (zero) for no"
                    + " wait, a positive duration, or LockRequest.WAIT_FOREVER");
        }
        return wait;
    }

    /** Whether {@code wait} means "forever": anything that would overflow a nanosecond deadline. */
    static boolean isForever(Duration wait) {
        return wait.equals(LockRequest.WAIT_FOREVER) || wait.compareTo(FOREVER) >= 0;
    }

    /** A hundred years: "forever" for any process, and far inside the range of nanosecond differences. */
    private static final Duration FOREVER = Duration.ofDays(365L * 100);

    /**
     * The deadline of {@code wait} on the {@link System#nanoTime()} scale. Compare it only by difference
     * ({@code now - deadline >= 0}): nanoTime may be negative, and the sum may wrap.
     */
    static long deadline(long startNanos, Duration wait) {
        return startNanos + (isForever(wait) ? FOREVER : wait).toNanos();
    }

    /**
     * {@code future}'s value, waited for without running anything else on this thread. {@code get()} and
     * {@code join()} on a worker of the common pool run the pool's pending async tasks while they wait, and such a
     * task would run inside this thread's lock scope and join its locks (R10). A managed block instead: the pool
     * may stand in a spare worker, so waiters on all its workers leave it running (a holder may need it); a pool
     * that may add none (its limit reached) is waited on all the same.
     */
    static <T> T await(CompletableFuture<T> future) throws InterruptedException {
        return await(future, true);
    }

    /**
     * {@code future}'s value, through interrupts, which it keeps for the caller; {@code managed}: as {@link #await},
     * else a plain wait, which cannot fail the way a pool's spare worker can (a thread that cannot be started).
     */
    static <T> T awaitUninterruptibly(CompletableFuture<T> future, boolean managed) {
        boolean interrupted = Thread.interrupted();
        try {
            while (true) {
                try {
                    return await(future, managed);
                }
                catch (InterruptedException ex) {
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

    private static <T> T await(CompletableFuture<T> future, boolean managed) throws InterruptedException {
        if (!future.isDone()) {
            CountDownLatch done = new CountDownLatch(1);
            future.whenComplete((value, failure) -> done.countDown());
            if (managed) {
                managedAwait(done);
            }
            else {
                done.await();
            }
        }
        return future.join(); // done: returns at once
    }

    private static void managedAwait(CountDownLatch done) throws InterruptedException {
        try {
            ForkJoinPool.managedBlock(new ForkJoinPool.ManagedBlocker() {
                @Override
                public boolean block() throws InterruptedException {
                    done.await();
                    return true;
                }

                @Override
                public boolean isReleasable() {
                    return done.getCount() == 0;
                }
            });
        }
        catch (RejectedExecutionException poolFull) {
            done.await(); // the pool may add no spare worker (its limit reached): wait all the same
        }
    }

    /** The earlier of two nanoTime instants, safe across wrap-around. */
    static long earlier(long a, long b) {
        return a - b <= 0 ? a : b;
    }
}
