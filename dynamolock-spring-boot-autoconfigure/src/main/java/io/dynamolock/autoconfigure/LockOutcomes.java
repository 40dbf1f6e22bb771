package io.dynamolock.autoconfigure;

import io.dynamolock.core.LockInterruptedException;
import io.dynamolock.core.LockLostException;
import io.dynamolock.core.LockQueueFullException;
import java.util.concurrent.CancellationException;

/** The {@code outcome} tag of a failed acquisition, shared by metrics and observations. */
final class LockOutcomes {

    static final String ACQUIRED = "acquired";
    static final String TIMEOUT = "timeout";
    /** The caller gave up waiting (a cancelled future, Mono or coroutine): no failure of the lock's. */
    static final String CANCELLED = "cancelled";

    private LockOutcomes() {
    }

    static String of(RuntimeException failure) {
        if (failure instanceof LockLostException) {
            return "lost";
        }
        if (failure instanceof LockInterruptedException) {
            return "interrupted";
        }
        if (failure instanceof LockQueueFullException) {
            return "queue_full";
        }
        if (failure instanceof CancellationException) {
            return CANCELLED;
        }
        return "error";
    }
}
