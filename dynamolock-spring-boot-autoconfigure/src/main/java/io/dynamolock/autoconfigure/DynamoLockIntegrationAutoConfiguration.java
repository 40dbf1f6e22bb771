package io.dynamolock.autoconfigure;

import io.dynamolock.core.LockTemplate;
import io.dynamolock.integration.DynamoLockRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * A Spring Integration {@link LockRegistry} on the {@link LockTemplate} ({@link DynamoLockRegistry}),
 * when {@code spring-integration-core} is on the class path and the application defines no
 * {@code LockRegistry} of its own. Aggregators, {@code LockRegistryLeaderInitiator} and
 * {@code executeLocked} then lock on DynamoDB, in arrival order.
 */
@AutoConfiguration(after = DynamoLockAutoConfiguration.class)
@ConditionalOnClass(LockRegistry.class)
@ConditionalOnBean(LockTemplate.class)
public class DynamoLockIntegrationAutoConfiguration {

    /** Closed before the template: held locks are released by their threads first (see {@code close()}). */
    @Bean
    @ConditionalOnMissingBean(LockRegistry.class)
    DynamoLockRegistry dynamoLockRegistry(LockTemplate lockTemplate) {
        return new DynamoLockRegistry(lockTemplate);
    }
}
