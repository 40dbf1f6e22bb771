package io.dynamolock.autoconfigure;

import io.dynamolock.annotation.LostLeasePolicy;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.reactive.ReactiveLockOperations;
import io.dynamolock.reactive.ReactiveLockTemplate;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Import;
import reactor.core.publisher.Mono;

/**
 * A {@link ReactiveLockTemplate} on the application's {@link LockTemplate} (the {@code @Primary} one of several)
 * when reactor-core is on the class path;
 * a lease lost while its body runs follows {@code dynamolock.on-lost-lease}, as for {@code @QueueLocked}.
 * It binds the properties itself, by the same rules ({@link DynamoLockPropertiesConfiguration}): an application that
 * excludes {@link DynamoLockAutoConfiguration} for a template of its own still starts, and gets one.
 */
@AutoConfiguration(after = DynamoLockAutoConfiguration.class)
@ConditionalOnClass({Mono.class, LockTemplate.class})
@Conditional(DynamoLockEnabledCondition.class)
@Import(DynamoLockPropertiesConfiguration.class)
public class DynamoLockReactiveAutoConfiguration {

    @Bean
    @ConditionalOnSingleCandidate(LockTemplate.class)
    @ConditionalOnMissingBean(ReactiveLockOperations.class)
    ReactiveLockTemplate reactiveLockTemplate(LockTemplate lockTemplate, DynamoLockProperties properties) {
        return new ReactiveLockTemplate(lockTemplate, properties.getOnLostLease() == LostLeasePolicy.FAIL);
    }
}
