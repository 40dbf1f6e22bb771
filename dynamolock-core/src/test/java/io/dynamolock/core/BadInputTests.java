package io.dynamolock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dynamolock.core.test.DynamoDbLocal;
import io.dynamolock.core.test.LockFixture;
import java.time.Duration;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;

/** Bad input fails before any request, naming the bad value and the fix. */
class BadInputTests {

    private final LockFixture fixture = new LockFixture();

    @AfterEach
    void tearDown() throws Exception {
        fixture.close();
    }

    @Test
    void rejectsNullAndBlankEntities() {
        LockTemplate locks = fixture.template();
        assertThatThrownBy(() -> locks.acquire(null, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("entity must not be null");
        assertThatThrownBy(() -> locks.acquire(" \t", Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not be blank");
        assertThatThrownBy(() -> locks.acquire(LockRequest.builder("order").namespace("").build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("namespace").hasMessageContaining("blank");
    }

    @Test
    void rejectsKeysOverDynamoDbLimitsNamingTheLimit() {
        LockTemplate locks = fixture.template();
        assertThatThrownBy(() -> locks.acquire("é".repeat(1025), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("2050 bytes").hasMessageContaining("at most 2048").hasMessageContaining("hash");
        assertThatThrownBy(() -> locks.acquire(LockRequest.builder("order").namespace("n".repeat(1025)).build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 1024 bytes in a sort key");
        assertThatThrownBy(() -> locks.acquire("bad\uD800", Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lone surrogate");
    }

    @Test
    void locksEntitiesWithOddCharacters() {
        LockTemplate locks = fixture.template();
        for (String entity : new String[] {"ordre № 42 ✓", "a#b", "a/b/c", "with spaces", "tab\tand\nnewline", "x".repeat(2048)}) {
            try (LockHandle lock = locks.acquire(entity, Duration.ofSeconds(5))) {
                assertThat(lock.entity()).isEqualTo(entity);
                assertThat(locks.queue(entity, null).entries()).hasSize(1);
            }
        }
    }

    @Test
    void rejectsBadWaitsAndLeases() {
        LockTemplate locks = fixture.template();
        assertThatThrownBy(() -> locks.acquire("order", Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PT-1S is negative")
                .hasMessageContaining("NO_WAIT");
        assertThatThrownBy(() -> locks.acquire(LockRequest.builder("order").lease(LockFixture.HEARTBEAT).build()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lease PT0.5S must be longer than the heartbeat interval PT0.5S");
        assertThatThrownBy(() -> locks.acquire(LockRequest.builder("order").lease(Duration.ZERO).build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must be a positive duration");
        assertThat(locks.queue("order", null).entries()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"leaseNotLongerThanHeartbeat", "negativeDefaultWait", "badTableName", "blankOwner",
            "pollBoundsReversed", "emptyQueue"})
    void rejectsBadTemplateOptions(String option) {
        Consumer<LockTemplate.Builder> bad = switch (option) {
            case "leaseNotLongerThanHeartbeat" -> b -> b.leaseDuration(Duration.ofSeconds(10)).heartbeatInterval(Duration.ofSeconds(10));
            case "negativeDefaultWait" -> b -> b.defaultWait(Duration.ofSeconds(-5));
            case "badTableName" -> b -> b.tableName("no spaces allowed");
            case "blankOwner" -> b -> b.ownerName(" ");
            case "pollBoundsReversed" -> b -> b.pollInterval(Duration.ofSeconds(2), Duration.ofSeconds(1));
            default -> b -> b.maxQueueLength(0);
        };
        String expected = switch (option) {
            case "leaseNotLongerThanHeartbeat" -> "lease PT10S must be longer than the heartbeat interval PT10S";
            case "negativeDefaultWait" -> "defaultWait PT-5S is negative";
            case "badTableName" -> "tableName 'no spaces allowed' is not a valid DynamoDB table name";
            case "blankOwner" -> "ownerName ' ' must be 1 to 200 characters";
            case "pollBoundsReversed" -> "maxPollInterval PT1S is shorter than minPollInterval PT2S";
            default -> "maxQueueLength 0 must be at least 1";
        };
        try (DynamoDbClient client = DynamoDbLocal.shared().client()) {
            LockTemplate.Builder builder = LockTemplate.builder(client);
            bad.accept(builder);
            assertThatThrownBy(builder::build).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(expected);
        }
    }

    @Test
    void namesAMissingTableAndHowToCreateIt() {
        try (DynamoDbClient client = DynamoDbLocal.shared().client();
                LockTemplate locks = LockTemplate.builder(client).tableName("no-such-table").build()) {
            assertThatThrownBy(() -> locks.acquire("order", Duration.ofSeconds(1)))
                    .isInstanceOf(LockTableException.class)
                    .hasMessageContaining("'no-such-table' does not exist")
                    .hasMessageContaining("partition key 'pk' (S), sort key 'sk' (S)");
            assertThat(locks.activeLocks()).isEmpty();
        }
    }

    @Test
    void namesATableWithTheWrongKeySchema() {
        try (DynamoDbClient client = DynamoDbLocal.shared().client()) {
            String table = "wrong-keys-" + System.nanoTime();
            client.createTable(b -> b.tableName(table).billingMode(BillingMode.PAY_PER_REQUEST)
                    .attributeDefinitions(a -> a.attributeName("id").attributeType(ScalarAttributeType.S))
                    .keySchema(k -> k.attributeName("id").keyType(KeyType.HASH)));
            try (LockTemplate locks = LockTemplate.builder(client).tableName(table).build()) {
                assertThatThrownBy(() -> locks.acquire("order", Duration.ofSeconds(1)))
                        .isInstanceOf(LockTableException.class)
                        .hasMessageContaining("'" + table + "' does not have the keys dynamolock needs")
                        .hasMessageContaining("partition key 'pk' (S), sort key 'sk' (S)");
            }
        }
    }

    @Test
    void releaseIsIdempotentAndWorksFromAnotherThread() throws Exception {
        LockTemplate locks = fixture.template();
        LockHandle lock = locks.acquire("order", Duration.ofSeconds(5));
        Thread other = new Thread(lock::release);
        other.start();
        other.join();
        lock.release();
        lock.close();
        assertThat(lock.isValid()).isFalse();
        assertThat(locks.queue("order", null).entries()).isEmpty();
        assertThat(locks.tryAcquire("order")).isPresent().get().satisfies(LockHandle::release);
    }

    @Test
    void refusesWorkAfterClose() {
        LockTemplate locks = fixture.template();
        locks.close();
        assertThatThrownBy(() -> locks.acquire("order", Duration.ofSeconds(1)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }
}
