package io.dynamolock.autoconfigure;

import io.dynamolock.core.LockTemplate;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The {@code dynamolock} health indicator ({@link DynamoLockHealthIndicator}), when Spring
 * Boot's health support is present; {@code management.health.dynamolock.enabled=false}
 * turns it off.
 */
@AutoConfiguration(after = DynamoLockAutoConfiguration.class)
@ConditionalOnClass({HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class})
@ConditionalOnBean({LockTemplate.class, DynamoDbClient.class})
@ConditionalOnEnabledHealthIndicator("dynamolock")
public class DynamoLockHealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "dynamolockHealthIndicator")
    DynamoLockHealthIndicator dynamolockHealthIndicator(LockTemplate lockTemplate, DynamoDbClient dynamoDbClient) {
        return new DynamoLockHealthIndicator(lockTemplate, dynamoDbClient);
    }
}
