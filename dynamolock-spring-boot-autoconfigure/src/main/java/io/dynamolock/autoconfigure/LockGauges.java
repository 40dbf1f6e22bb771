package io.dynamolock.autoconfigure;

import io.dynamolock.core.LockOperations;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * {@code dynamolock.locks} (gauge): the locks this instance holds ({@code state=holding}) and
 * waits for ({@code state=waiting}) now, from {@link LockOperations#activeLocks()}.
 */
public class LockGauges implements MeterBinder {

    private final LockOperations locks;

    public LockGauges(LockOperations locks) {
        this.locks = locks;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        gauge(registry, "holding", true);
        gauge(registry, "waiting", false);
    }

    private void gauge(MeterRegistry registry, String state, boolean holding) {
        Gauge.builder("dynamolock.locks", locks, operations -> count(operations, holding))
                .description("Locks this instance holds or waits for")
                .tag("state", state)
                .strongReference(true)
                .register(registry);
    }

    private static long count(LockOperations locks, boolean holding) {
        return locks.activeLocks().stream().filter(lock -> lock.holding() == holding).count();
    }
}
