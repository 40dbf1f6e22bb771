package io.dynamolock.autoconfigure;

import io.dynamolock.core.LockTemplate;
import io.dynamolock.annotation.QueueLockedSkippedEvent;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;

/**
 * Micrometer metrics of dynamolock's locks, when Micrometer and a {@link MeterRegistry}
 * are present: see {@link LockMetricsListener}, {@link LockGauges} and {@link WakeUpMeters}. The gauges and
 * wake-up meters read one template: with several, the {@code @Primary} one, or none. The listener needs no
 * template: an application that builds its own templates can give it to each of them.
 */
@AutoConfiguration(after = DynamoLockAutoConfiguration.class,
        afterName = {"org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
                "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"})
@ConditionalOnClass({MeterRegistry.class, LockTemplate.class})
@ConditionalOnBean({MeterRegistry.class, LockTemplate.class})
public class DynamoLockMetricsAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    LockMetricsListener lockMetricsListener(MeterRegistry meterRegistry) {
        return new LockMetricsListener(meterRegistry);
    }

    /** Counts {@code @QueueLocked} calls skipped because their lock was busy (onWaitTimeout = SKIP). */
    @Bean
    @ConditionalOnMissingBean(name = "lockSkipCounter")
    ApplicationListener<QueueLockedSkippedEvent> lockSkipCounter(MeterRegistry meterRegistry) {
        return skipped -> Counter.builder("dynamolock.skipped")
                .description("@QueueLocked calls skipped because their lock was busy")
                .tag("namespace", skipped.namespace())
                .tag("method", skipped.method())
                .register(meterRegistry)
                .increment();
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnSingleCandidate(LockTemplate.class)
    LockGauges lockGauges(LockTemplate lockTemplate) {
        return new LockGauges(lockTemplate);
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnSingleCandidate(LockTemplate.class)
    WakeUpMeters wakeUpMeters(LockTemplate lockTemplate) {
        return new WakeUpMeters(lockTemplate);
    }
}
