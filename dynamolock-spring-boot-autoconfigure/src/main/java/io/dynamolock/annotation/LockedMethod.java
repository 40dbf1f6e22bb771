package io.dynamolock.annotation;

import java.lang.reflect.Method;
import java.time.Duration;
import org.springframework.expression.Expression;

/**
 * A {@link QueueLocked} method as parsed and checked once: everything a call needs but
 * the entity's value.
 *
 * @param method      the annotated method, most specific for its class
 * @param description {@code Class.method(ParamTypes)} for messages
 * @param entitySource the entity expression as written
 * @param entity      the parsed entity expression
 * @param namespace   the namespace, or {@code null} for the template's default
 * @param maxWait     the wait, or {@code null} for the template's default
 * @param lease       the lease, or {@code null} for the template's default
 * @param async       whether it returns a {@code CompletableFuture} or {@code CompletionStage}
 * @param onWaitTimeout what a call does when the wait runs out
 * @param minHold     the least time the lock is held from its grant, or {@code null} for none
 * @param failClosed  whether the lock is fail-closed
 */
record LockedMethod(Method method, String description, String entitySource, Expression entity, String namespace,
        Duration maxWait, Duration lease, boolean async, WaitTimeoutPolicy onWaitTimeout, Duration minHold,
        boolean failClosed) {
}
