package io.dynamolock.starter;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.test.DynamoDbLocal;
import io.dynamolock.starter.QuickStartApplication.OrderService;
import org.junit.jupiter.api.Test;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

@SpringBootTest
class QuickStartTests {

    @DynamicPropertySource
    static void dynamoDbLocal(DynamicPropertyRegistry registry) {
        registry.add("dynamodb-local.port", () -> DynamoDbLocal.shared().port());
    }

    @Autowired
    OrderService orders;

    @Test
    void annotatedMethodRunsUnderTheLockWithNothingButTheStarterAndProperties() {
        assertThat(AopUtils.isCglibProxy(orders)).isTrue();
        assertThat(orders.addItem("order-42", "book")).singleElement().satisfies(lock -> {
            assertThat(lock.entity()).isEqualTo("order-42");
            assertThat(lock.namespace()).isEqualTo("default");
            assertThat(lock.holding()).isTrue();
        });
    }
}
