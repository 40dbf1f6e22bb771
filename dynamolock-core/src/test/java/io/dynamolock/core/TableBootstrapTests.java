package io.dynamolock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dynamolock.core.test.DynamoDbLocal;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;

class TableBootstrapTests {

    private final DynamoDbClient client = DynamoDbLocal.shared().client();
    private final String table = "bootstrap-" + UUID.randomUUID().toString().substring(0, 8);

    @AfterEach
    void tearDown() {
        client.close();
    }

    @Test
    void createsTheTableWithTtlAndIsIdempotent() {
        TableBootstrap.Status created = TableBootstrap.of(client, table).createIfMissing();
        assertThat(created.usable()).isTrue();
        assertThat(created.ttlEnabled()).isTrue();
        var description = client.describeTable(b -> b.tableName(table)).table();
        assertThat(description.billingModeSummary().billingMode()).isEqualTo(BillingMode.PAY_PER_REQUEST);
        assertThat(TableBootstrap.of(client, table).createIfMissing().usable()).isTrue();
    }

    @Test
    void verifyNamesAMissingTable() {
        assertThat(TableBootstrap.of(client, table).check().exists()).isFalse();
        assertThatThrownBy(() -> TableBootstrap.of(client, table).verify())
                .isInstanceOf(LockTableException.class)
                .hasMessageContaining("'" + table + "' does not exist")
                .hasMessageContaining("dynamolock.create-table=true");
    }

    @Test
    void verifyNamesAWrongKeySchema() {
        client.createTable(b -> b.tableName(table).billingMode(BillingMode.PAY_PER_REQUEST)
                .attributeDefinitions(a -> a.attributeName("id").attributeType(ScalarAttributeType.S))
                .keySchema(k -> k.attributeName("id").keyType(KeyType.HASH)));
        assertThatThrownBy(() -> TableBootstrap.of(client, table).verify())
                .isInstanceOf(LockTableException.class)
                .hasMessageContaining("no partition key 'pk' of type S (has [id HASH S])")
                .hasMessageContaining("no sort key 'sk'")
                .hasMessageContaining("Expected partition key 'pk' (S), sort key 'sk' (S)");
    }

    @Test
    void verifyAcceptsATableWithoutTtlButReportsIt() {
        client.createTable(b -> b.tableName(table).billingMode(BillingMode.PAY_PER_REQUEST)
                .attributeDefinitions(a -> a.attributeName("pk").attributeType(ScalarAttributeType.S),
                        a -> a.attributeName("sk").attributeType(ScalarAttributeType.S))
                .keySchema(k -> k.attributeName("pk").keyType(KeyType.HASH), k -> k.attributeName("sk").keyType(KeyType.RANGE)));
        TableBootstrap.Status status = TableBootstrap.of(client, table).verify();
        assertThat(status.usable()).isTrue();
        assertThat(status.ttlEnabled()).isFalse();
    }
}
