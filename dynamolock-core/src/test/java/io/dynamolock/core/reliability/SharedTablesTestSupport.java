package io.dynamolock.core.reliability;

import io.dynamolock.core.test.DynamoDbLocal;
import io.dynamolock.core.test.LockItems;
import io.dynamolock.core.test.LockWorkerMain;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * A lock table and a data table (for the counters critical sections update) on the shared
 * DynamoDB Local, made once per test class.
 */
abstract class SharedTablesTestSupport {

    static DynamoDbLocal dynamo;
    static DynamoDbClient client;
    static String table;
    static String data;
    static LockItems items;

    @BeforeAll
    static void tables() {
        dynamo = DynamoDbLocal.shared();
        client = dynamo.client();
        table = dynamo.newLockTable();
        data = "data-" + UUID.randomUUID().toString().substring(0, 8);
        LockWorkerMain.createDataTable(client, data);
        items = new LockItems(client, table);
    }

    @AfterAll
    static void closeClient() {
        client.close();
    }
}
