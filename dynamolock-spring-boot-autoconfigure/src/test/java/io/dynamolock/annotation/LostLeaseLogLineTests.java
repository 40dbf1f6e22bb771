package io.dynamolock.annotation;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.autoconfigure.DynamoDbLocalProperties;
import io.dynamolock.autoconfigure.DynamoLockAutoConfiguration;
import io.dynamolock.core.test.DynamoDbLocal;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The starter's own WARN of a lease lost while a method ran (dynamolock.on-lost-lease=log): an entity often comes
 * from a request, and a line break in it must not forge a second log line.
 */
@ExtendWith(OutputCaptureExtension.class)
class LostLeaseLogLineTests {

    private static final DynamoDbLocal LOCAL = DynamoDbLocal.shared();

    @Test
    void theLostLeaseWarnDoesNotLetAnEntityForgeALine(CapturedOutput output) {
        String table = LOCAL.newLockTable();
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DynamoLockAutoConfiguration.class))
                .withPropertyValues(DynamoDbLocalProperties.of(table, "dynamolock.lease-duration=60s",
                        "dynamolock.heartbeat-interval=30s", "dynamolock.on-lost-lease=log"))
                .withBean(Forger.class)
                .run(context -> assertThat(context.getBean(Forger.class).loseLeaseUnheard(table,
                        "order-7\n2026-01-01T00:00:00.000Z  WARN 1 --- [main] FORGED: operator broke every lock"))
                        .isEqualTo("done"));
        assertThat(output.getAll()).contains("(dynamolock.on-lost-lease=log)")
                .contains("entity='order-7\\u000a2026-01-01T00:00:00.000Z  WARN 1 --- [main] FORGED")
                .as("the entity's line break is escaped, as in the core's own log lines")
                .doesNotContain("\n2026-01-01T00:00:00.000Z  WARN 1 --- [main] FORGED");
    }

    public static class Forger {

        private final DynamoDbClient dynamoDb;

        public Forger(DynamoDbClient dynamoDb) {
            this.dynamoDb = dynamoDb;
        }

        /** Deletes its own lock item while it runs, so that its release finds the entry gone: a lost lease. */
        @QueueLocked(entity = "#id")
        public String loseLeaseUnheard(String table, String id) {
            dynamoDb.deleteItem(b -> b.tableName(table).key(Map.of("pk", AttributeValue.fromS(id),
                    "sk", AttributeValue.fromS("default"))));
            return "done";
        }
    }
}
