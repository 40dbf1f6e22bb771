package io.dynamolock.annotation;

import java.lang.reflect.Method;
import io.dynamolock.core.LockMode;
import java.time.Duration;
import java.util.List;
import org.springframework.expression.Expression;

/**
 * A {@link QueueLocked} method as parsed and checked once: everything a call needs but
 * the entity's value.
 *
 * @param method      the annotated method, most specific for its class
 * @param description {@code Class.method(ParamTypes)} for messages
 * @param entitySources the entity expressions as written
 * @param entities    the parsed entity expressions, one or more
 * @param mode        the lock mode
 * @param permits     the permits (1, or N for a semaphore)
 * @param namespace   the namespace, or {@code null} for the template's default
 * @param maxWait     the wait, or {@code null} for the template's default
 * @param lease       the lease, or {@code null} for the template's default
 * @param returns     what the method returns, which decides how long the lock is held
 * @param onWaitTimeout what a call does when the wait runs out
 * @param minHold     the least time the lock is held from its grant, or {@code null} for none
 * @param failClosed  whether the lock is fail-closed
 */
record LockedMethod(Method method, String description, List<String> entitySources, List<Expression> entities,
        LockMode mode, int permits, String namespace, Duration maxWait, Duration lease, Returns returns,
        WaitTimeoutPolicy onWaitTimeout, Duration minHold, boolean failClosed) {

    /** What a locked method returns, as far as the lock is concerned. */
    enum Returns {
        /** A value (or nothing): the lock is held until the method returns. */
        VALUE,
        /** {@code CompletableFuture} or {@code CompletionStage}: held until it completes. */
        FUTURE,
        /** {@code Mono}: held while it runs. */
        MONO,
        /**
         * A Kotlin {@code suspend fun} (Spring AOP sees a {@code Mono}): held while its coroutine runs, and after a
         * cancellation until it has ended.
         */
        SUSPEND,
        /** {@code Flux}: held while it runs. */
        FLUX,
        /**
         * A Kotlin {@code Flow} (with kotlinx-coroutines-reactor): held while it is collected, in the collecting
         * coroutine ({@code LockedFlow}), and after a cancellation until the flow has ended.
         */
        FLOW;

        /** Whether the lock follows a publisher, coroutine or flow (the reactive path). */
        boolean reactive() {
            return this == MONO || this == SUSPEND || this == FLUX || this == FLOW;
        }
    }

    /** Whether it returns a {@code CompletableFuture} or {@code CompletionStage}. */
    boolean async() {
        return returns == Returns.FUTURE;
    }

    /** Whether it returns a Reactor publisher or a Kotlin {@code Flow}, or is a suspend function. */
    boolean reactive() {
        return returns.reactive();
    }
}
