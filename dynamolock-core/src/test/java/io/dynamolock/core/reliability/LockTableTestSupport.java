package io.dynamolock.core.reliability;

import io.dynamolock.core.test.DynamoDbLocal;
import io.dynamolock.core.test.LockItems;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * A fresh lock table on the shared DynamoDB Local, made once per test class, with a plain
 * client (no hooks, no faults) for reading the items and for templates that play the others.
 */
abstract class LockTableTestSupport {

    static DynamoDbLocal dynamo;
    static DynamoDbClient client;
    static String table;
    static LockItems items;

    @BeforeAll
    static void lockTable() {
        dynamo = DynamoDbLocal.shared();
        client = dynamo.client();
        table = dynamo.newLockTable();
        items = new LockItems(client, table);
    }

    @AfterAll
    static void closeClient() {
        client.close();
    }
}
