package io.dynamolock.autoconfigure;

import io.dynamolock.core.LockTemplate;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Observations of dynamolock's acquisitions and holds ({@link LockObservationListener}) on Boot's
 * {@link ObservationRegistry}, when Micrometer's observation API and a registry are present. The listener is
 * added to the auto-configured {@code LockTemplate} like every {@code LockListener} bean.
 */
@AutoConfiguration(before = DynamoLockAutoConfiguration.class,
        afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass({ObservationRegistry.class, LockTemplate.class})
@ConditionalOnBean(ObservationRegistry.class)
public class DynamoLockObservationAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    LockObservationListener lockObservationListener(ObservationRegistry observationRegistry) {
        return new LockObservationListener(observationRegistry);
    }
}
