package io.dynamolock.annotation.app;

import io.dynamolock.annotation.QueueLocked;
import java.util.Map;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Service;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/** An unprotected read-modify-write of one DynamoDB item: only the lock keeps updates from being lost. */
@Service
public class CounterService {

    private final DynamoDbClient dynamoDb;
    private final String table;

    public CounterService(DynamoDbClient dynamoDb, @Value("${test.counter-table}") String table) {
        this.dynamoDb = dynamoDb;
        this.table = table;
    }

    @QueueLocked(entity = "'counter-' + #id", maxWait = "infinite")
    public void increment(String id) {
        long value = get(id);
        Thread.yield();
        dynamoDb.putItem(b -> b.tableName(table).item(Map.of("id", AttributeValue.fromS(id),
                "value", AttributeValue.fromN(Long.toString(value + 1)))));
    }

    public long get(String id) {
        Map<String, AttributeValue> item = dynamoDb.getItem(b -> b.tableName(table)
                .key(Map.of("id", AttributeValue.fromS(id))).consistentRead(true)).item();
        return item == null || item.isEmpty() ? 0 : Long.parseLong(item.get("value").n());
    }
}
