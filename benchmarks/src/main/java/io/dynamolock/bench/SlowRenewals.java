package io.dynamolock.bench;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttribute;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * The renewal-capacity scenario's slow network: an SDK interceptor that holds every lease renewal for
 * {@code extra} more than other requests, half before sending and half after the answer (as a slow region or a
 * throttled table would), and counts renewals.
 *
 * <p>A renewal is told apart by where it falls, not by its expression text (which the core may change): in that
 * scenario every lock is taken once, by one owner, with nobody queued behind it, and nothing is released while it
 * is measured. So the first UpdateItem on an item is its enqueue, and every later UpdateItem on it is a renewal.
 * Purges are sent by waiters only, and there are none; a removal the core sent on its own for a lost entry would be
 * counted (and slowed) as a renewal, but today's core sends none. Requests before {@link #arm()} (the warm-up,
 * whose locks are released) are left alone. Classified once per API call, so an SDK retry of a renewal stays a
 * renewal and each of its attempts is slowed.
 */
final class SlowRenewals implements ExecutionInterceptor {

    private static final ExecutionAttribute<Boolean> RENEWAL = new ExecutionAttribute<>("bench.renewal");

    private final long halfExtraNanos;
    private final Set<String> enqueued = ConcurrentHashMap.newKeySet();
    private final LongAdder enqueues = new LongAdder();
    private final LongAdder renewals = new LongAdder();
    private volatile boolean armed;

    SlowRenewals(Duration extra) {
        this.halfExtraNanos = extra.toNanos() / 2;
    }

    /** From now on, UpdateItems are enqueues or renewals. */
    void arm() {
        armed = true;
    }

    @Override
    public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
        if (armed && context.request() instanceof UpdateItemRequest update) {
            if (enqueued.add(update.tableName() + MeteredNetwork.itemKey(update.key()))) {
                enqueues.increment();
            }
            else {
                renewals.increment();
                attributes.putAttribute(RENEWAL, true);
            }
        }
    }

    @Override
    public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
        if (isRenewal(attributes)) {
            MeteredNetwork.pause(halfExtraNanos);
        }
    }

    @Override
    public void afterTransmission(Context.AfterTransmission context, ExecutionAttributes attributes) {
        if (isRenewal(attributes)) {
            MeteredNetwork.pause(halfExtraNanos);
        }
    }

    /** Renewals sent since {@link #arm()} (API calls, not attempts). */
    long renewals() {
        return renewals.sum();
    }

    /** Enqueues sent since {@link #arm()}: one per lock taken, or the classification is off. */
    long enqueues() {
        return enqueues.sum();
    }

    private static boolean isRenewal(ExecutionAttributes attributes) {
        return Boolean.TRUE.equals(attributes.getAttribute(RENEWAL));
    }
}
