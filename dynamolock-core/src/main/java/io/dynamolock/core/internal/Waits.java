package io.dynamolock.core.internal;

import io.dynamolock.core.LockRequest;
import java.time.Duration;

/** The three kinds of wait: none, bounded, forever. */
final class Waits {

    private Waits() {
    }

    static Duration requireValid(Duration wait, String name) {
        if (wait == null) {
            throw new IllegalArgumentException(name + " must not be null; use LockRequest.NO_WAIT for no wait or"
                    + " LockRequest.WAIT_FOREVER to wait as long as it takes");
        }
        if (wait.isNegative()) {
            throw new IllegalArgumentException(name + " " + wait + " is negative; use LockRequest.NO_WAIT (zero) for no"
                    + " wait, a positive duration, or LockRequest.WAIT_FOREVER");
        }
        return wait;
    }

    /** Whether {@code wait} means "forever": anything that would overflow a nanosecond deadline. */
    static boolean isForever(Duration wait) {
        return wait.equals(LockRequest.WAIT_FOREVER) || wait.compareTo(Duration.ofDays(365L * 100)) >= 0;
    }

    /** The deadline of {@code wait} on the {@link System#nanoTime()} scale, or {@code Long.MAX_VALUE}. */
    static long deadline(long startNanos, Duration wait) {
        return isForever(wait) ? Long.MAX_VALUE : startNanos + wait.toNanos();
    }
}
