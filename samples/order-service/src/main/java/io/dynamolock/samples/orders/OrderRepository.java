package io.dynamolock.samples.orders;

import java.util.Map;
import java.util.Optional;
import org.springframework.stereotype.Repository;
import software.amazon.awssdk.enhanced.dynamodb.DynamoDbEnhancedClient;
import software.amazon.awssdk.enhanced.dynamodb.DynamoDbTable;
import software.amazon.awssdk.enhanced.dynamodb.Expression;
import software.amazon.awssdk.enhanced.dynamodb.Key;
import software.amazon.awssdk.enhanced.dynamodb.TableSchema;
import software.amazon.awssdk.enhanced.dynamodb.model.PutItemEnhancedRequest;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ResourceInUseException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;

/**
 * Orders in DynamoDB through the enhanced client. Every write of an existing order is fenced with
 * the fencing token of the order's lock (README, "Fencing"): the order stores the token of its last
 * writer, and a write carrying a smaller one is rejected, so a holder whose lease was lost cannot
 * overwrite the work of the holder that took over.
 */
@Repository
public class OrderRepository {

    private final DynamoDbClient dynamoDbClient;
    private final DynamoDbTable<Order> table;

    public OrderRepository(DynamoDbClient dynamoDbClient, SampleProperties properties) {
        this.dynamoDbClient = dynamoDbClient;
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
        return Optional.ofNullable(table.getItem(key(orderId)));
    }

    /** Stores a new order, unless one with its id exists. */
    public void create(Order order) {
        try {
            table.putItem(PutItemEnhancedRequest.builder(Order.class).item(order)
                    .conditionExpression(Expression.builder().expression("attribute_not_exists(orderId)").build())
                    .build());
        }
        catch (ConditionalCheckFailedException exists) {
            throw new OrderExistsException(order.getOrderId());
        }
    }

    /**
     * Claims the order for the lock holder with {@code fencingToken} and returns it as of the claim,
     * in one request. Claim before reading: once a new holder has claimed, every write of an earlier
     * holder is rejected, also one landing between this read and this holder's write.
     *
     * @throws OrderNotFoundException      if there is no such order
     * @throws StaleFencingTokenException  if a later lock holder has claimed the order
     */
    public Order claim(String orderId, long fencingToken) {
        try {
            Expression fence = fence(fencingToken);
            Map<String, AttributeValue> claimed = dynamoDbClient.updateItem(b -> b.tableName(table.tableName())
                    .key(key(orderId).primaryKeyMap(table.tableSchema()))
                    .updateExpression("SET #token = :token")
                    .conditionExpression(fence.expression())
                    .expressionAttributeNames(fence.expressionNames())
                    .expressionAttributeValues(fence.expressionValues())
                    .returnValues(ReturnValue.ALL_NEW)
                    .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)).attributes();
            return table.tableSchema().mapToItem(claimed);
        }
        catch (ConditionalCheckFailedException rejected) {
            throw refusal(orderId, fencingToken, rejected, false); // a claim writes no update: nothing stored
        }
    }

    /**
     * Writes the order back, unless a lock holder with a larger token than {@code fencingToken} has
     * claimed or written it meanwhile.
     *
     * @throws OrderNotFoundException      if there is no such order
     * @throws StaleFencingTokenException  if a later lock holder has claimed the order
     */
    public void save(Order order, long fencingToken) {
        order.setLastFencingToken(fencingToken);
        try {
            table.putItem(PutItemEnhancedRequest.builder(Order.class).item(order).conditionExpression(fence(fencingToken))
                    .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)
                    .build());
        }
        catch (ConditionalCheckFailedException rejected) {
            throw refusal(order.getOrderId(), fencingToken, rejected, true);
        }
    }

    /** Overwrites the order whoever wrote it last: for the demo's round without a lock only. */
    public void saveUnfenced(Order order) {
        table.putItem(order);
    }

    private static RuntimeException refusal(String orderId, long fencingToken, ConditionalCheckFailedException rejected,
            boolean update) {
        Map<String, AttributeValue> stored = rejected.item();
        if (stored == null || stored.isEmpty()) {
            return new OrderNotFoundException(orderId);
        }
        // An earlier attempt may have landed with its answer lost, and the later holder seen it.
        boolean rejectedOnRetry = update && rejected.numAttempts() != null && rejected.numAttempts() > 1;
        return new StaleFencingTokenException(orderId, fencingToken, Long.parseLong(stored.get("lastFencingToken").n()),
                rejectedOnRetry);
    }

    private static Key key(String orderId) {
        return Key.builder().partitionValue(orderId).build();
    }

    /**
     * No larger token has claimed or written the order. Orders are created with token 0 and tokens are
     * positive, so this also fails when the order does not exist: a fenced write never creates one.
     */
    private static Expression fence(long fencingToken) {
        return Expression.builder().expression("#token <= :token")
                .expressionNames(Map.of("#token", "lastFencingToken"))
                .expressionValues(Map.of(":token", AttributeValue.fromN(Long.toString(fencingToken))))
                .build();
    }
}
