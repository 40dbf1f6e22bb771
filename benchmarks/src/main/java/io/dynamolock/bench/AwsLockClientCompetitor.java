package io.dynamolock.bench;

import com.amazonaws.services.dynamodbv2.AcquireLockOptions;
import com.amazonaws.services.dynamodbv2.AmazonDynamoDBLockClient;
import com.amazonaws.services.dynamodbv2.AmazonDynamoDBLockClientOptions;
import com.amazonaws.services.dynamodbv2.CreateDynamoDBTableOptions;
import com.amazonaws.services.dynamodbv2.LockItem;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.ProvisionedThroughput;

/**
 * AWS's {@code com.amazonaws:dynamodb-lock-client} 1.4.0 ({@link AmazonDynamoDBLockClient}, SDK v2). Its defaults
 * (from its source): lease 20 s, heartbeat every 5 s on a background thread, a waiter re-reads the lock item every
 * 1 s ({@code refreshPeriod}), gives up after the lease plus {@code additionalTimeToWaitForLock} (default 1 s), and
 * release deletes the item. The benchmark passes its wait as {@code additionalTimeToWaitForLock}, so no competitor
 * gives up early; "tuned" also re-reads every 50 ms (dynamolock's shortest poll) and uses its README's lease (10 s)
 * and heartbeat (3 s).
 */
final class AwsLockClientCompetitor implements Competitor {

    static final Duration TUNED_REFRESH = Duration.ofMillis(50);

    private final AmazonDynamoDBLockClient client;
    private final Duration refresh;

    AwsLockClientCompetitor(DynamoDbClient dynamoDb, String table, boolean tuned) {
        AmazonDynamoDBLockClientOptions.AmazonDynamoDBLockClientOptionsBuilder options =
                AmazonDynamoDBLockClientOptions.builder(dynamoDb, table);
        if (tuned) {
            options.withTimeUnit(TimeUnit.SECONDS).withLeaseDuration(10L).withHeartbeatPeriod(3L);
        }
        this.client = new AmazonDynamoDBLockClient(options.build());
        this.refresh = tuned ? TUNED_REFRESH : null;
    }

    static void createTable(DynamoDbClient client, String table) {
        AmazonDynamoDBLockClient.createLockTableInDynamoDB(CreateDynamoDBTableOptions
                .builder(client, ProvisionedThroughput.builder().readCapacityUnits(10L).writeCapacityUnits(10L).build(),
                        table)
                .build());
    }

    @Override
    public Handle acquire(String entity, Duration wait) throws InterruptedException {
        AcquireLockOptions.AcquireLockOptionsBuilder options = AcquireLockOptions.builder(entity)
                .withTimeUnit(TimeUnit.MILLISECONDS)
                .withAdditionalTimeToWaitForLock(wait.toMillis());
        if (refresh != null) {
            options.withRefreshPeriod(refresh.toMillis());
        }
        LockItem lock = client.acquireLock(options.build());
        return () -> client.releaseLock(lock);
    }

    @Override
    public void close() {
        try {
            client.close();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
