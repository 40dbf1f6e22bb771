package io.dynamolock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.test.DynamoDbLocal;
import io.dynamolock.integration.DynamoLockRegistry;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.integration.support.locks.DefaultLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;

class DynamoLockIntegrationAutoConfigurationTests {

    private static final String TABLE = DynamoDbLocal.shared().newLockTable();

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DynamoLockAutoConfiguration.class,
                    DynamoLockIntegrationAutoConfiguration.class))
            .withPropertyValues(DynamoDbLocalProperties.of(TABLE));

    @Test
    void configuresLockRegistryOnTheLockTemplate() {
        contextRunner.withPropertyValues("dynamolock.default-namespace=flows").run(context -> {
            assertThat(context).hasSingleBean(LockRegistry.class).getBean(LockRegistry.class)
                    .isInstanceOf(DynamoLockRegistry.class);
            LockTemplate locks = context.getBean(LockTemplate.class);
            Lock lock = context.getBean(LockRegistry.class).obtain("group-1");
            lock.lock();
            try {
                assertThat(locks.activeLocks()).singleElement().satisfies(info -> {
                    assertThat(info.entity()).isEqualTo("group-1");
                    assertThat(info.namespace()).isEqualTo("flows");
                    assertThat(info.holding()).isTrue();
                });
            }
            finally {
                lock.unlock();
            }
        });
    }

    @Test
    void backsOffWhenUserDefinesLockRegistry() {
        DefaultLockRegistry own = new DefaultLockRegistry();
        contextRunner.withBean(LockRegistry.class, () -> own).run(context -> assertThat(context)
                .doesNotHaveBean(DynamoLockRegistry.class).getBean(LockRegistry.class).isSameAs(own));
    }

    @Test
    void noLockRegistryWithoutSpringIntegration() {
        contextRunner.withClassLoader(new FilteredClassLoader(LockRegistry.class))
                .run(context -> assertThat(context).hasSingleBean(LockTemplate.class)
                        .doesNotHaveBean(DynamoLockRegistry.class));
    }

    @Test
    void noLockRegistryWithoutLockTemplate() {
        contextRunner.withPropertyValues("dynamolock.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(LockRegistry.class));
    }
}
