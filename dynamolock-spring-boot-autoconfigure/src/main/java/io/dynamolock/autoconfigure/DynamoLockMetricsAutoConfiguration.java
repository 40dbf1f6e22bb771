package io.dynamolock.autoconfigure;

import io.dynamolock.core.LockTemplate;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Micrometer metrics of dynamolock's locks, when Micrometer and a {@link MeterRegistry}
 * are present: see {@link LockMetricsListener} and {@link LockGauges}.
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

    @Bean
    @ConditionalOnMissingBean
    LockGauges lockGauges(LockTemplate lockTemplate) {
        return new LockGauges(lockTemplate);
    }
}
