package io.dynamolock.autoconfigure;

import io.dynamolock.core.LockTemplate;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * {@code dynamolock.locks} (gauge): the locks this instance holds ({@code state=holding}) and
 * waits for ({@code state=waiting}) now, from {@link LockTemplate#activeLocks()}.
 */
public class LockGauges implements MeterBinder {

    private final LockTemplate lockTemplate;

    public LockGauges(LockTemplate lockTemplate) {
        this.lockTemplate = lockTemplate;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        gauge(registry, "holding", true);
        gauge(registry, "waiting", false);
    }

    private void gauge(MeterRegistry registry, String state, boolean holding) {
        Gauge.builder("dynamolock.locks", lockTemplate, template -> count(template, holding))
                .description("Locks this instance holds or waits for")
                .tag("state", state)
                .strongReference(true)
                .register(registry);
    }

    private static long count(LockTemplate template, boolean holding) {
        return template.activeLocks().stream().filter(lock -> lock.holding() == holding).count();
    }
}
