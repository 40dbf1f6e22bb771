package io.dynamolock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import io.dynamolock.autoconfigure.DynamoDbLocalProperties;
import io.dynamolock.autoconfigure.DynamoLockAutoConfiguration;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockListener;
import io.dynamolock.core.LockLostException;
import io.dynamolock.core.test.DynamoDbLocal;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
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
 * A lease lost while the method runs: the method deletes its own lock item, as a process
 * that judged the lease expired would purge it; the next heartbeat finds the entry gone.
 */
@ExtendWith(OutputCaptureExtension.class)
class QueueLockedLostLeaseTests {

    private static final DynamoDbLocal LOCAL = DynamoDbLocal.shared();

    private static final String TABLE = LOCAL.newLockTable();

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DynamoLockAutoConfiguration.class))
            .withPropertyValues(DynamoDbLocalProperties.of(TABLE,
                    "dynamolock.lease-duration=5s",
                    "dynamolock.heartbeat-interval=100ms"))
            .withBean(LostLeases.class)
            .withBean(Saboteur.class);

    @Test
    void failsTheCallWhenTheLeaseWasLost() {
        contextRunner.run(context -> {
            Saboteur saboteur = context.getBean(Saboteur.class);
            assertThatExceptionOfType(LockLostException.class).isThrownBy(() -> saboteur.loseLease("lost-1", false))
                    .withMessageContaining("The lease of lock entity='lost-1' namespace='default'")
                    .withMessageContaining("was lost while " + Saboteur.class.getName() + ".loseLease(String, boolean)"
                            + " ran")
                    .matches(LockLostException::wasGranted, "granted: the method ran");
        });
    }

    /** No heartbeat comes during the call: the loss is found by the release itself, and reported all the same. */
    @Test
    void failsTheCallWhenItsReleaseFindsTheEntryGone() {
        contextRunner.withPropertyValues("dynamolock.lease-duration=60s", "dynamolock.heartbeat-interval=30s")
                .run(context -> {
                    Saboteur saboteur = context.getBean(Saboteur.class);
                    assertThatExceptionOfType(LockLostException.class)
                            .isThrownBy(() -> saboteur.loseLeaseUnheard("lost-5"))
                            .withMessageContaining("The lease of lock entity='lost-5' namespace='default'");
                });
    }

    @Test
    void keepsTheMethodsExceptionAndAddsTheLossAsSuppressed() {
        contextRunner.run(context -> {
            Saboteur saboteur = context.getBean(Saboteur.class);
            assertThatIllegalStateException().isThrownBy(() -> saboteur.loseLease("lost-2", true))
                    .withMessage("failed after losing the lease")
                    .satisfies(ex -> assertThat(ex.getSuppressed()).singleElement()
                            .isInstanceOf(LockLostException.class));
        });
    }

    @Test
    void failsTheFutureWhenTheLeaseWasLost() {
        contextRunner.run(context -> {
            Saboteur saboteur = context.getBean(Saboteur.class);
            CompletableFuture<String> gate = new CompletableFuture<>();
            CompletableFuture<String> result = saboteur.loseLeaseAsync("lost-3", gate);
            saboteur.purge("lost-3");
            assertThat(context.getBean(LostLeases.class).await("lost-3")).isTrue();
            gate.complete("done");
            assertThat(result).failsWithin(Duration.ofSeconds(10)).withThrowableThat()
                    .havingRootCause().isInstanceOf(LockLostException.class);
        });
    }

    @Test
    void onlyLogsWhenConfiguredTo(CapturedOutput output) {
        contextRunner.withPropertyValues("dynamolock.on-lost-lease=log").run(context -> {
            assertThat(context.getBean(Saboteur.class).loseLease("lost-4", false)).isEqualTo("done");
            assertThat(output).contains("The lease of lock entity='lost-4'")
                    .contains("(dynamolock.on-lost-lease=log)");
        });
    }

    public static class LostLeases implements LockListener {

        private final Map<String, CountDownLatch> lost = new java.util.concurrent.ConcurrentHashMap<>();

        @Override
        public void onLost(LockHandle lock) {
            latch(lock.entity()).countDown();
        }

        boolean await(String entity) throws InterruptedException {
            return latch(entity).await(10, TimeUnit.SECONDS);
        }

        private CountDownLatch latch(String entity) {
            return lost.computeIfAbsent(entity, key -> new CountDownLatch(1));
        }
    }

    public static class Saboteur {

        private final DynamoDbClient dynamoDb;
        private final LostLeases lostLeases;

        public Saboteur(DynamoDbClient dynamoDb, LostLeases lostLeases) {
            this.dynamoDb = dynamoDb;
            this.lostLeases = lostLeases;
        }

        @QueueLocked(entity = "#id")
        public String loseLease(String id, boolean thenFail) throws InterruptedException {
            purge(id);
            assertThat(lostLeases.await(id)).isTrue();
            if (thenFail) {
                throw new IllegalStateException("failed after losing the lease");
            }
            return "done";
        }

        @QueueLocked(entity = "#id")
        public String loseLeaseUnheard(String id) {
            purge(id);
            return "done";
        }

        @QueueLocked(entity = "#id")
        public CompletableFuture<String> loseLeaseAsync(String id, CompletableFuture<String> gate) {
            return gate;
        }

        void purge(String id) {
            dynamoDb.deleteItem(b -> b.tableName(TABLE).key(Map.of("pk", AttributeValue.fromS(id),
                    "sk", AttributeValue.fromS("default"))));
        }
    }
}
