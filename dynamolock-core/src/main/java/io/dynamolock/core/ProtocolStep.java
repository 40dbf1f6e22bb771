package io.dynamolock.core;

import software.amazon.awssdk.core.interceptor.ExecutionAttribute;

/**
 * The DynamoDB requests of the lock protocol. Every request dynamolock sends carries its step
 * as the execution attribute {@link #ATTRIBUTE}, so an SDK {@code ExecutionInterceptor} can
 * tell the steps apart (for metrics, logs or fault injection) without reading expressions:
 *
 * <pre>{@code
 * public void afterExecution(Context.AfterExecution context, ExecutionAttributes attributes) {
 *     ProtocolStep step = attributes.getAttribute(ProtocolStep.ATTRIBUTE); // null: not a lock request
 * }
 * }</pre>
 */
public enum ProtocolStep {

    /** Takes a ticket and joins the queue (UpdateItem); also the whole uncontended acquire. */
    ENQUEUE,
    /** A waiter's strongly consistent read of the queue (GetItem). */
    READ,
    /** A heartbeat: extends one entry's lease (UpdateItem). */
    RENEW,
    /** Leaves the queue: a release, or a wait given up (UpdateItem). */
    REMOVE,
    /** Removes entries ahead whose lease expired, each only if not renewed since (UpdateItem). */
    PURGE,
    /**
     * Raises the item's TTL to cover a live entry with a longer lease than the last writer's
     * (UpdateItem); sent only when leases of different lengths share one lock.
     */
    RAISE_TTL,
    /**
     * Lets an item expire again once its last fail-closed entry left, when that entry's removal could not
     * (UpdateItem); rare: a removal that races with another fail-closed entry's.
     */
    LOWER_TTL,
    /**
     * Removes one named entry on an operator's request ({@code LockTemplate.breakLock}), if it still has the
     * ticket the operator saw (UpdateItem); preceded by a {@link #READ}.
     */
    BREAK;

    /** The execution attribute that carries the step of each request. */
    public static final ExecutionAttribute<ProtocolStep> ATTRIBUTE = new ExecutionAttribute<>("dynamolock.protocol-step");
}
