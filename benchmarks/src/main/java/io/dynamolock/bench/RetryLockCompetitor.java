package io.dynamolock.bench;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;

/**
 * The common hand-written lock: one item per lock, taken by a conditional put (the item is absent or its lease
 * has run out), given back by a conditional delete; a refused put is retried after an exponential backoff with
 * full jitter ({@code sleep = random(0, min(cap, base * 2^attempt))}, base 10 ms, cap 1 s). No heartbeat: the
 * lease (30 s) is far longer than any hold here.
 */
final class RetryLockCompetitor implements Competitor {

    static final Duration BASE = Duration.ofMillis(10);
    static final Duration CAP = Duration.ofSeconds(1);
    static final Duration LEASE = Duration.ofSeconds(30);

    private final DynamoDbClient client;
    private final String table;
    private final String owner = UUID.randomUUID().toString();

    RetryLockCompetitor(DynamoDbClient client, String table) {
        this.client = client;
        this.table = table;
    }

    static void createTable(DynamoDbClient client, String table) {
        client.createTable(b -> b.tableName(table).billingMode(BillingMode.PAY_PER_REQUEST)
                .keySchema(k -> k.attributeName("pk").keyType(KeyType.HASH))
                .attributeDefinitions(AttributeDefinition.builder().attributeName("pk")
                        .attributeType(ScalarAttributeType.S).build()));
    }

    @Override
    public Handle acquire(String entity, Duration wait) throws InterruptedException, TimeoutException {
        String me = owner + "/" + Thread.currentThread().getId();
        long deadline = System.nanoTime() + wait.toNanos();
        for (int attempt = 0; ; attempt++) {
            long now = System.currentTimeMillis();
            try {
                client.putItem(b -> b.tableName(table)
                        .item(Map.of("pk", AttributeValue.fromS(entity), "owner", AttributeValue.fromS(me),
                                "expiresAt", AttributeValue.fromN(Long.toString(now + LEASE.toMillis()))))
                        .conditionExpression("attribute_not_exists(pk) OR expiresAt < :now")
                        .expressionAttributeValues(Map.of(":now", AttributeValue.fromN(Long.toString(now)))));
                return () -> release(entity, me);
            }
            catch (ConditionalCheckFailedException taken) {
                long ceiling = Math.min(CAP.toNanos(), BASE.toNanos() << Math.min(attempt, 20));
                long sleep = ThreadLocalRandom.current().nextLong(ceiling + 1);
                if (System.nanoTime() + sleep - deadline > 0) {
                    throw new TimeoutException("No lock on " + entity + " within " + wait);
                }
                Thread.sleep(sleep / 1_000_000, (int) (sleep % 1_000_000));
            }
        }
    }

    private void release(String entity, String me) {
        try {
            client.deleteItem(b -> b.tableName(table).key(Map.of("pk", AttributeValue.fromS(entity)))
                    .conditionExpression("#o = :me")
                    .expressionAttributeNames(Map.of("#o", "owner"))
                    .expressionAttributeValues(Map.of(":me", AttributeValue.fromS(me))));
        }
        catch (ConditionalCheckFailedException expired) {
            // The lease ran out and someone else holds it now: nothing to give back.
        }
    }

    @Override
    public void close() {
    }
}
