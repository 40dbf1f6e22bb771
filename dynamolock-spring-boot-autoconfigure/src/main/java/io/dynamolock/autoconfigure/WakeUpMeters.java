package io.dynamolock.autoconfigure;

import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.WakeUpStats;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.function.ToDoubleFunction;

/**
 * {@code dynamolock.wake-up.hints} (counter): what the template's wake-up hints did, by {@code result}:
 * {@code sent}, {@code dropped} (not sent), {@code received}, {@code rejected} (garbage, forged, too old) and
 * {@code useful} (a waiter took the lock or read the queue earlier thanks to one). Bound only when hints are on.
 */
public class WakeUpMeters implements MeterBinder {

    private final LockTemplate template;

    public WakeUpMeters(LockTemplate template) {
        this.template = template;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        if (template.wakeUpAddress() == null) {
            return; // hints off: no meters that would only ever read zero
        }
        counter(registry, "sent", WakeUpStats::sent);
        counter(registry, "dropped", WakeUpStats::dropped);
        counter(registry, "received", WakeUpStats::received);
        counter(registry, "rejected", WakeUpStats::rejected);
        counter(registry, "useful", WakeUpStats::useful);
    }

    private void counter(MeterRegistry registry, String result, ToDoubleFunction<WakeUpStats> count) {
        FunctionCounter.builder("dynamolock.wake-up.hints", template, locks -> count.applyAsDouble(locks.wakeUpStats()))
                .description("Wake-up hints between instances, by result")
                .tag("result", result)
                .register(registry);
    }
}
