package io.dynamolock.annotation;

import io.dynamolock.annotation.app.LockTestApplication;
import io.dynamolock.core.test.DynamoDbLocal;
import java.util.UUID;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;

/**
 * One application context for every {@code @SpringBootTest} here: {@link LockTestApplication}
 * on DynamoDB Local, configured only through {@code dynamolock.*} properties as a user would,
 * with a lock table it creates at startup. Short leases and waits keep the tests quick.
 */
@SpringBootTest(classes = LockTestApplication.class, properties = {
        "dynamolock.create-table=true",
        "dynamolock.dynamodb.region=us-east-1",
        "dynamolock.dynamodb.access-key-id=local",
        "dynamolock.dynamodb.secret-access-key=local",
        "dynamolock.lease-duration=10s",
        "dynamolock.heartbeat-interval=2s",
        "dynamolock.default-wait=10s",
        "dynamolock.poll-interval.min=10ms",
        "dynamolock.poll-interval.max=100ms",
        "test.lock.namespace=from-placeholder",
        "test.lock.wait=250ms"})
abstract class QueueLockedTestSupport {

    static final DynamoDbLocal LOCAL = DynamoDbLocal.shared();

    static final String LOCK_TABLE = "spring-locks-" + UUID.randomUUID().toString().substring(0, 8);

    static final String COUNTER_TABLE = "spring-counters-" + UUID.randomUUID().toString().substring(0, 8);

    @DynamicPropertySource
    static void dynamoDbLocal(DynamicPropertyRegistry registry) {
        registry.add("dynamolock.dynamodb.endpoint", LOCAL::endpoint);
        registry.add("dynamolock.table-name", () -> LOCK_TABLE);
        registry.add("test.counter-table", () -> {
            createCounterTable();
            return COUNTER_TABLE;
        });
    }

    private static synchronized void createCounterTable() {
        try (var client = LOCAL.client()) {
            if (client.listTables().tableNames().contains(COUNTER_TABLE)) {
                return;
            }
            client.createTable(b -> b.tableName(COUNTER_TABLE).billingMode(BillingMode.PAY_PER_REQUEST)
                    .attributeDefinitions(a -> a.attributeName("id").attributeType(ScalarAttributeType.S))
                    .keySchema(k -> k.attributeName("id").keyType(KeyType.HASH)));
        }
    }
}
