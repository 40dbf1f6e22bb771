package io.dynamolock.samples.orders;

import java.util.Optional;
import org.springframework.stereotype.Repository;
import software.amazon.awssdk.enhanced.dynamodb.DynamoDbEnhancedClient;
import software.amazon.awssdk.enhanced.dynamodb.DynamoDbTable;
import software.amazon.awssdk.enhanced.dynamodb.Key;
import software.amazon.awssdk.enhanced.dynamodb.TableSchema;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ResourceInUseException;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;

/** Orders in DynamoDB through the enhanced client; plain reads and overwrites, as most code does. */
@Repository
public class OrderRepository {

    private final DynamoDbTable<Order> table;

    public OrderRepository(DynamoDbClient dynamoDbClient, SampleProperties properties) {
        this.table = DynamoDbEnhancedClient.builder().dynamoDbClient(dynamoDbClient).build()
                .table(properties.ordersTable(), TableSchema.fromBean(Order.class));
        try {
            dynamoDbClient.createTable(b -> b.tableName(properties.ordersTable()).billingMode(BillingMode.PAY_PER_REQUEST)
                    .attributeDefinitions(a -> a.attributeName("orderId").attributeType(ScalarAttributeType.S))
                    .keySchema(k -> k.attributeName("orderId").keyType(KeyType.HASH)));
            dynamoDbClient.waiter().waitUntilTableExists(b -> b.tableName(properties.ordersTable()));
        }
        catch (ResourceInUseException exists) {
            // Created by an earlier run or another copy of the app.
        }
    }

    public Optional<Order> find(String orderId) {
        return Optional.ofNullable(table.getItem(Key.builder().partitionValue(orderId).build()));
    }

    public void save(Order order) {
        table.putItem(order);
    }
}
