package io.dynamolock.autoconfigure;

import io.dynamolock.core.LockTemplate;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The {@code dynamolock} health indicator ({@link DynamoLockHealthIndicator}), when Spring
 * Boot's health support is present; {@code management.health.dynamolock.enabled=false}
 * turns it off. It checks the table through the {@link LockTemplate}'s own client, so it needs no
 * {@code DynamoDbClient} bean, and several of them do not confuse it. With several templates, it checks the
 * {@code @Primary} one, or none.
 */
@AutoConfiguration(after = DynamoLockAutoConfiguration.class)
@ConditionalOnClass({HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class})
@ConditionalOnSingleCandidate(LockTemplate.class)
@ConditionalOnEnabledHealthIndicator("dynamolock")
public class DynamoLockHealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(value = DynamoLockHealthIndicator.class, name = "dynamolockHealthIndicator")
    DynamoLockHealthIndicator dynamolockHealthIndicator(LockTemplate lockTemplate) {
        return new DynamoLockHealthIndicator(lockTemplate);
    }
}
