package io.dynamolock.autoconfigure;

import io.dynamolock.core.LockTemplate;
import io.dynamolock.integration.DynamoLockRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * A Spring Integration {@link LockRegistry} ({@link DynamoLockRegistry}) on the {@link LockTemplate}, or the
 * {@code @Primary} one of several, when {@code spring-integration-core} is on the class path and the application
 * defines no {@code LockRegistry} of its own. Aggregators, {@code LockRegistryLeaderInitiator} and
 * {@code executeLocked} then lock on DynamoDB, in arrival order.
 */
@AutoConfiguration(after = DynamoLockAutoConfiguration.class)
@ConditionalOnClass(LockRegistry.class)
@ConditionalOnSingleCandidate(LockTemplate.class)
public class DynamoLockIntegrationAutoConfiguration {

    /** Closed before the template: held locks are released by their threads first (see {@code close()}). */
    @Bean
    @ConditionalOnMissingBean(LockRegistry.class)
    DynamoLockRegistry dynamoLockRegistry(LockTemplate lockTemplate) {
        return new DynamoLockRegistry(lockTemplate);
    }
}
