package io.dynamolock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;

import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.test.DynamoDbLocal;
import io.dynamolock.reactive.ReactiveLockOperations;
import io.dynamolock.reactive.ReactiveLockTemplate;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

class DynamoLockReactiveAutoConfigurationTests {

    private static final String TABLE = DynamoDbLocal.shared().newLockTable();

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DynamoLockAutoConfiguration.class,
                    DynamoLockReactiveAutoConfiguration.class))
            .withPropertyValues(DynamoDbLocalProperties.of(TABLE));

    @Test
    void configuresAReactiveLockTemplateOnTheLockTemplate() {
        contextRunner.run(context -> {
            assertThat(context).hasSingleBean(ReactiveLockTemplate.class);
            ReactiveLockOperations locks = context.getBean(ReactiveLockOperations.class);
            StepVerifier.create(locks.execute(LockRequest.builder("auto-reactive").build(),
                    lock -> Mono.just(lock.entity()))).expectNext("auto-reactive").verifyComplete();
        });
    }

    /**
     * An application that excludes DynamoLockAutoConfiguration and defines its own LockTemplate still gets a
     * ReactiveLockTemplate, with the properties' defaults, as it gets the health indicator and the endpoint.
     */
    @Test
    void configuresAReactiveLockTemplateWithoutTheMainAutoConfiguration() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DynamoLockReactiveAutoConfiguration.class))
                .withBean(LockTemplate.class, () -> LockTemplate.builder(DynamoDbLocal.shared().client())
                        .tableName(TABLE).build())
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(ReactiveLockTemplate.class);
                    StepVerifier.create(context.getBean(ReactiveLockOperations.class).execute(
                            LockRequest.builder("own-template").build(), lock -> Mono.just(lock.entity())))
                            .expectNext("own-template").verifyComplete();
                });
    }

    /**
     * Without DynamoLockAutoConfiguration, the properties are bound by the same rules: an empty value is unset, its
     * default, and a duration without a unit stops the start (Boot would read it as milliseconds).
     */
    @Test
    void bindsThePropertiesByDynamolocksRulesWithoutTheMainAutoConfiguration() {
        ApplicationContextRunner reactiveOnly = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DynamoLockReactiveAutoConfiguration.class))
                .withBean(LockTemplate.class, () -> LockTemplate.builder(DynamoDbLocal.shared().client())
                        .tableName(TABLE).build());
        reactiveOnly.withPropertyValues("dynamolock.lease-duration=", "dynamolock.on-lost-lease=")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(ReactiveLockTemplate.class));
        reactiveOnly.withPropertyValues("dynamolock.default-wait=30")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("'30' has no unit, which Spring Boot reads as milliseconds"));
    }

    @Test
    void backsOffWhenUserDefinesReactiveLockOperations() {
        ReactiveLockOperations own = mock(ReactiveLockOperations.class);
        contextRunner.withBean(ReactiveLockOperations.class, () -> own).run(context -> {
            assertThat(context).doesNotHaveBean(ReactiveLockTemplate.class);
            assertThat(context.getBean(ReactiveLockOperations.class)).isSameAs(own);
        });
    }

    @Test
    void backsOffWithoutReactorOnTheClassPath() {
        contextRunner.withClassLoader(new FilteredClassLoader(Mono.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(ReactiveLockOperations.class));
    }

    @Test
    void backsOffWhenDisabled() {
        contextRunner.withPropertyValues("dynamolock.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(ReactiveLockOperations.class));
    }
}
