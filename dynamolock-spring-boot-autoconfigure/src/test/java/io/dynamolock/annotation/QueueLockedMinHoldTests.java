package io.dynamolock.annotation;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.autoconfigure.DynamoDbLocalProperties;
import io.dynamolock.autoconfigure.DynamoLockAutoConfiguration;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.test.DynamoDbLocal;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * {@code minHold} when the application stops within it: the job has finished, so a fail-closed lock, which would
 * never expire, is released at the stop, and a fail-open one is left to expire with its lease.
 */
class QueueLockedMinHoldTests {

    private static final DynamoDbLocal LOCAL = DynamoDbLocal.shared();

    private final String table = LOCAL.newLockTable();

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DynamoLockAutoConfiguration.class))
            .withPropertyValues(DynamoDbLocalProperties.of(table, "dynamolock.lease-duration=2s",
                    "dynamolock.heartbeat-interval=500ms"))
            .withBean(Jobs.class);

    @Test
    void aFailClosedLockHeldForItsMinimumHoldIsReleasedWhenTheApplicationStops() {
        contextRunner.run(context -> {
            context.getBean(Jobs.class).payments();
            try (DynamoDbClient client = LOCAL.client();
                    LockTemplate others = LockTemplate.builder(client).tableName(table).build()) {
                assertThat(others.tryAcquire(LockRequest.builder("payment-run").failClosed(true).build()))
                        .as("kept for its minimum hold").isEmpty();
            }
        });
        // The context, and its LockTemplate, closed within the minimum hold.

        try (DynamoDbClient client = LOCAL.client();
                LockTemplate others = LockTemplate.builder(client).tableName(table).build()) {
            Optional<LockHandle> next = others.tryAcquire(LockRequest.builder("payment-run").failClosed(true).build());
            next.ifPresent(LockHandle::release);
            assertThat(next).as("released at the stop; queue " + others.queue("payment-run", null).entries())
                    .isPresent();
        }
    }

    @Test
    void aFailOpenLockHeldForItsMinimumHoldIsLeftToItsLeaseWhenTheApplicationStops() {
        String entity = "report-" + UUID.randomUUID();
        // A lease long enough that the check below comes well within it, however slow this machine.
        contextRunner.withPropertyValues("dynamolock.lease-duration=6s")
                .run(context -> context.getBean(Jobs.class).report(entity));

        try (DynamoDbClient client = LOCAL.client();
                LockTemplate others = LockTemplate.builder(client).tableName(table).build()) {
            assertThat(others.tryAcquire(entity)).as("still kept out after the stop").isEmpty();
            try (LockHandle next = others.acquire(entity, Duration.ofSeconds(20))) {
                assertThat(next.isValid()).as("taken over once its lease ran out").isTrue();
            }
        }
    }

    public static class Jobs {

        @QueueLocked(entity = "'payment-run'", failClosed = true, maxWait = "0", minHold = "1h")
        public void payments() {
        }

        @QueueLocked(entity = "#entity", maxWait = "0", minHold = "1h")
        public void report(String entity) {
        }
    }
}
