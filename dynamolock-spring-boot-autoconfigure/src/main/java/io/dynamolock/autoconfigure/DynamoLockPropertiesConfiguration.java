package io.dynamolock.autoconfigure;

import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;

/**
 * {@link DynamoLockProperties}, bound by dynamolock's rules wherever they are read: imported by each
 * auto-configuration that binds them, so an application that excludes {@link DynamoLockAutoConfiguration} (for a
 * template of its own) gets the same rules from {@link DynamoLockReactiveAutoConfiguration}.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(DynamoLockProperties.class)
class DynamoLockPropertiesConfiguration {

    /** An empty value of any {@code dynamolock.*} property is unset, its default: {@code ${VAR:}} works for all. */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static EmptyValueBindHandlerAdvisor dynamoLockEmptyValueBindHandlerAdvisor() {
        return new EmptyValueBindHandlerAdvisor();
    }

    /** A {@code dynamolock.*} duration without a unit stops the start: Boot would read {@code 60} as 60 ms. */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static UnitlessDurationBindHandlerAdvisor dynamoLockUnitlessDurationBindHandlerAdvisor(Environment environment) {
        return new UnitlessDurationBindHandlerAdvisor(environment);
    }
}
