package io.dynamolock.core.internal;

import io.dynamolock.core.LockOptionException;
import io.dynamolock.core.LockRequest;
import java.time.Duration;

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

    /** The earlier of two nanoTime instants, safe across wrap-around. */
    static long earlier(long a, long b) {
        return a - b <= 0 ? a : b;
    }
}
