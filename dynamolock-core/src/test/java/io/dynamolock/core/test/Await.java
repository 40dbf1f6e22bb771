package io.dynamolock.core.test;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Waits for an observable condition (a table state, a process event) with a generous
 * deadline. Not a way to order steps: use latches and hooks for that. The deadline only
 * stops a broken test from hanging.
 */
public final class Await {

    private Await() {
    }

    public static void until(Duration timeout, String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("Not true within " + timeout.toMillis() + " ms: " + what);
            }
            LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
        }
    }

    /**
     * Fails if {@code future} completes within {@code window}: a grant that must not happen yet may come from another
     * thread a moment after the step that would wrongly cause it, so one look right after that step misses it.
     */
    public static void notDoneWithin(Duration window, String why, Future<?> future) {
        try {
            future.get(window.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (TimeoutException expected) {
            return;
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new AssertionError("Interrupted while watching: " + why, ex);
        }
        catch (ExecutionException ex) {
            throw new AssertionError("Done (failed) within " + window.toMillis() + " ms, though " + why, ex);
        }
        throw new AssertionError("Done within " + window.toMillis() + " ms, though " + why);
    }

    /** Waits until {@code value} is not null and returns it. */
    public static <T> T value(Duration timeout, String what, Supplier<T> value) {
        Object[] box = new Object[1];
        until(timeout, what, () -> (box[0] = value.get()) != null);
        @SuppressWarnings("unchecked")
        T result = (T) box[0];
        return result;
    }
}
