package io.dynamolock.autoconfigure;

import io.dynamolock.core.LockTemplate;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;

/**
 * The {@code dynamolock} actuator endpoint ({@link DynamoLockEndpoint}), when Actuator is
 * present and the endpoint is exposed ({@code management.endpoints.web.exposure.include}), on the
 * application's one {@link LockTemplate} (or its {@code @Primary} one).
 */
@AutoConfiguration(after = DynamoLockAutoConfiguration.class)
@ConditionalOnClass({Endpoint.class, ConditionalOnAvailableEndpoint.class})
@ConditionalOnSingleCandidate(LockTemplate.class)
@ConditionalOnAvailableEndpoint(DynamoLockEndpoint.class)
public class DynamoLockEndpointAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    DynamoLockEndpoint dynamoLockEndpoint(LockTemplate lockTemplate) {
        return new DynamoLockEndpoint(lockTemplate);
    }
}
