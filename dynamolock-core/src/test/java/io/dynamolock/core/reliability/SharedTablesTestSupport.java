package io.dynamolock.core.reliability;

import io.dynamolock.core.test.LockWorkerMain;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;

/**
 * A lock table and a data table (for the counters critical sections update) on the shared
 * DynamoDB Local, made once per test class.
 */
abstract class SharedTablesTestSupport extends LockTableTestSupport {

    static String data;

    @BeforeAll
    static void dataTable() {
        data = "data-" + UUID.randomUUID().toString().substring(0, 8);
        LockWorkerMain.createDataTable(client, data);
    }
}
