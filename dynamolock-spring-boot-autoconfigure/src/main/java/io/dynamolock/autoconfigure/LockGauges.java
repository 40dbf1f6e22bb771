package io.dynamolock.autoconfigure;

import io.dynamolock.core.LockMode;
import io.dynamolock.core.LockOperations;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * {@code dynamolock.locks} (gauge): the locks this instance holds ({@code state=holding}) and
 * waits for ({@code state=waiting}) now, by {@code mode} ({@code exclusive} or {@code shared}), from
 * {@link LockOperations#activeLocks()}.
 */
public class LockGauges implements MeterBinder {

    private final LockOperations locks;

    public LockGauges(LockOperations locks) {
        this.locks = locks;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        for (LockMode mode : LockMode.values()) {
            gauge(registry, "holding", true, mode);
            gauge(registry, "waiting", false, mode);
        }
    }

    private void gauge(MeterRegistry registry, String state, boolean holding, LockMode mode) {
        Gauge.builder("dynamolock.locks", locks, operations -> count(operations, holding, mode))
                .description("Locks this instance holds or waits for")
                .tag("state", state)
                .tag("mode", LockMetricsListener.tag(mode))
                .strongReference(true)
                .register(registry);
    }

    private static long count(LockOperations locks, boolean holding, LockMode mode) {
        return locks.activeLocks().stream().filter(lock -> lock.holding() == holding && lock.mode() == mode).count();
    }
}
