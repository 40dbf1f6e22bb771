package io.dynamolock.autoconfigure;

import io.dynamolock.core.BrokenLock;
import io.dynamolock.core.LockAttempt;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockListener;
import io.dynamolock.core.LockMode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;

/**
 * Records this instance's lock events in Micrometer. Tags name the namespace and the {@code mode}
 * ({@code exclusive}, which semaphores are too, or {@code shared}), never the entity (entities are unbounded).
 * <ul>
 * <li>{@code dynamolock.acquire} (timer): time spent waiting for a lock; {@code outcome} is
 * {@code acquired}, {@code timeout} (also a failed no-wait attempt), {@code lost} (the lease ran out
 * while waiting), {@code interrupted}, {@code queue_full}, {@code cancelled} (the caller gave up: a
 * cancelled future, Mono or coroutine) or {@code error} (a request failed, the template closed). The count of
 * each outcome is the number of such acquisitions.</li>
 * <li>{@code dynamolock.held} (timer): how long locks were held, measured at release.</li>
 * <li>{@code dynamolock.lost} (counter): leases lost while held.</li>
 * <li>{@code dynamolock.break} (counter): breaks of queue entries by this instance
 * ({@code LockTemplate.breakLock}, the actuator's delete operation); {@code outcome} is {@code broken}
 * or {@code not-found} (no entry had the ticket: nothing removed).</li>
 * </ul>
 */
public class LockMetricsListener implements LockListener {

    private final MeterRegistry registry;

    public LockMetricsListener(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void onAcquired(LockAttempt attempt, LockHandle lock, Duration waited) {
        acquireTimer(attempt, LockOutcomes.ACQUIRED).record(waited);
    }

    @Override
    public void onNotAcquired(LockAttempt attempt, Duration waited) {
        acquireTimer(attempt, LockOutcomes.TIMEOUT).record(waited);
    }

    @Override
    public void onFailed(LockAttempt attempt, Duration waited, RuntimeException failure) {
        acquireTimer(attempt, LockOutcomes.of(failure)).record(waited);
    }

    @Override
    public void onReleased(LockHandle lock, Duration held) {
        Timer.builder("dynamolock.held")
                .description("How long locks were held")
                .tag("namespace", lock.namespace())
                .tag("mode", tag(lock.mode()))
                .register(registry)
                .record(held);
    }

    @Override
    public void onLost(LockHandle lock) {
        Counter.builder("dynamolock.lost")
                .description("Leases lost while held")
                .tag("namespace", lock.namespace())
                .tag("mode", tag(lock.mode()))
                .register(registry)
                .increment();
    }

    @Override
    public void onBroken(BrokenLock broken) {
        breakCounter(broken.namespace(), "broken").increment();
    }

    @Override
    public void onBreakRefused(String entity, String namespace, long ticket) {
        breakCounter(namespace, "not-found").increment();
    }

    private Counter breakCounter(String namespace, String outcome) {
        return Counter.builder("dynamolock.break")
                .description("Queue entries broken on purpose, and breaks that found no entry")
                .tag("namespace", namespace)
                .tag("outcome", outcome)
                .register(registry);
    }

    /** The {@code mode} tag of metrics and observations: {@code exclusive} or {@code shared}. */
    static String tag(LockMode mode) {
        return mode == LockMode.SHARED ? "shared" : "exclusive";
    }

    private Timer acquireTimer(LockAttempt attempt, String outcome) {
        return Timer.builder("dynamolock.acquire")
                .description("Time spent waiting for a lock")
                .tag("namespace", attempt.namespace())
                .tag("mode", tag(attempt.mode()))
                .tag("outcome", outcome)
                .register(registry);
    }
}
