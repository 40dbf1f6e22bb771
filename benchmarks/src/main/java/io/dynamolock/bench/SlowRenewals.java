package io.dynamolock.bench;

import io.dynamolock.core.ProtocolStep;
import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;

/**
 * The renewal-capacity measurement's fault: an SDK interceptor that holds every lease renewal for {@code extra}
 * more than other requests, half before sending and half after the answer (as a slow region or a throttled table
 * would), and counts enqueues, renewals and the renewals it delayed.
 *
 * <p>A renewal is a request whose {@link ProtocolStep#ATTRIBUTE} is {@link ProtocolStep#RENEW}: the core marks
 * every request with its step, so neither expression text nor request order is read. Requests before {@link #arm()}
 * (the warm-up) are left alone and not counted. Every attempt of a renewal (SDK retries included) is delayed and
 * counted as delayed once its answer has been held; the measurement is void if none was (as when {@code extra} is not
 * positive: then nothing is delayed).
 */
final class SlowRenewals implements ExecutionInterceptor {

    private final long halfExtraNanos;
    private final LongAdder enqueues = new LongAdder();
    private final LongAdder renewals = new LongAdder();
    private final LongAdder delayed = new LongAdder();
    private volatile boolean armed;

    SlowRenewals(Duration extra) {
        this.halfExtraNanos = extra.toNanos() / 2;
    }

    /** From now on, renewals are delayed and requests counted. */
    void arm() {
        armed = true;
    }

    @Override
    public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
        if (armed) {
            ProtocolStep step = attributes.getAttribute(ProtocolStep.ATTRIBUTE);
            if (step == ProtocolStep.ENQUEUE) {
                enqueues.increment();
            }
            else if (step == ProtocolStep.RENEW) {
                renewals.increment();
            }
        }
    }

    @Override
    public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
        if (slowed(attributes)) {
            MeteredNetwork.pause(halfExtraNanos);
        }
    }

    @Override
    public void afterTransmission(Context.AfterTransmission context, ExecutionAttributes attributes) {
        if (slowed(attributes)) {
            MeteredNetwork.pause(halfExtraNanos);
            delayed.increment();
        }
    }

    /** Enqueues sent since {@link #arm()}: one per lock taken, since nobody else wants the locks. */
    long enqueues() {
        return enqueues.sum();
    }

    /** Renewals sent since {@link #arm()} (API calls, not attempts). */
    long renewals() {
        return renewals.sum();
    }

    /** Renewal attempts whose answer was held since {@link #arm()}: the proof that the fault was injected. */
    long delayed() {
        return delayed.sum();
    }

    private boolean slowed(ExecutionAttributes attributes) {
        return armed && halfExtraNanos > 0 && attributes.getAttribute(ProtocolStep.ATTRIBUTE) == ProtocolStep.RENEW;
    }
}
