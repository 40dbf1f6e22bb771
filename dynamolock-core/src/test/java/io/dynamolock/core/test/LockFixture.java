package io.dynamolock.core.test;

import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.QueueSnapshot;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Templates on one fresh lock table of the shared DynamoDB Local, each with a client of
 * its own (as separate processes would have), closed together. Short leases by default
 * so that expiry tests take seconds.
 */
public final class LockFixture implements AutoCloseable {

    public static final Duration LEASE = Duration.ofSeconds(2);
    public static final Duration HEARTBEAT = Duration.ofMillis(500);

    private final DynamoDbLocal db = DynamoDbLocal.shared();
    private final String table = db.newLockTable();
    private final DynamoDbClient admin = db.client();
    private final List<AutoCloseable> resources = new ArrayList<>();
    private final LockTemplate observer = LockTemplate.builder(admin).tableName(table).build();

    public String table() {
        return table;
    }

    /** A client for direct reads and writes of the table, outside any template. */
    public DynamoDbClient admin() {
        return admin;
    }

    public LockTemplate template() {
        return template(b -> { });
    }

    public LockTemplate template(Consumer<LockTemplate.Builder> customizer, ExecutionInterceptor... interceptors) {
        DynamoDbClient client = db.client(interceptors);
        LockTemplate template = build(client, customizer);
        resources.add(client);
        resources.add(template);
        return template;
    }

    private LockTemplate build(DynamoDbClient client, Consumer<LockTemplate.Builder> customizer) {
        LockTemplate.Builder builder = LockTemplate.builder(client).tableName(table).leaseDuration(LEASE)
                .heartbeatInterval(HEARTBEAT).pollInterval(Duration.ofMillis(20), Duration.ofMillis(200));
        customizer.accept(builder);
        return builder.build();
    }

    /**
     * A template whose client is closed as soon as the template has {@linkplain LockTemplate#terminated()
     * terminated}, as an owner that closes it then would (the Spring auto-configuration does): whatever the
     * template still sends after that fails.
     */
    public LockTemplate templateClosingItsClientOnTermination(Consumer<LockTemplate.Builder> customizer,
            ExecutionInterceptor... interceptors) {
        DynamoDbClient client = db.client(interceptors);
        LockTemplate template = build(client, customizer);
        template.terminated().whenComplete((done, never) -> client.close());
        resources.add(template);
        return template;
    }

    /** The queue of {@code entity} in the default namespace, read with a client no template under test shares. */
    public List<QueueSnapshot.Entry> queue(String entity) {
        return observer.queue(entity, null).entries();
    }

    /** Waits until the queue of {@code entity} holds {@code length} entries (each waiter is then enqueued). */
    public void awaitQueueLength(String entity, int length) throws InterruptedException {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
        while (queue(entity).size() < length) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the queue of " + entity + " never reached " + length + ": " + queue(entity));
            }
            Thread.sleep(10);
        }
    }

    /** Removes the entry of {@code lock} behind its holder's back, as another process's purge would. */
    public void purge(io.dynamolock.core.LockHandle lock) {
        purge(lock.entity(), lock.namespace(), lock.entryId());
    }

    /**
     * Removes the entry {@code entryId} of {@code entity} in the default namespace, as
     * {@link #purge(io.dynamolock.core.LockHandle)}.
     */
    public void purge(String entity, String entryId) {
        purge(entity, "default", entryId);
    }

    private void purge(String entity, String namespace, String entryId) {
        admin.updateItem(b -> b.tableName(table)
                .key(Map.of("pk", AttributeValue.fromS(entity), "sk", AttributeValue.fromS(namespace)))
                .updateExpression("REMOVE #t, #e")
                .expressionAttributeNames(Map.of("#t", "t#" + entryId, "#e", "e#" + entryId)));
    }

    /**
     * Sets the lease end of the entry {@code entryId} of {@code entity} in the default namespace a second in the past:
     * it has expired, as if its process had died.
     */
    public void expire(String entity, String entryId) {
        admin.updateItem(b -> b.tableName(table)
                .key(Map.of("pk", AttributeValue.fromS(entity), "sk", AttributeValue.fromS("default")))
                .updateExpression("SET #e = :e")
                .expressionAttributeNames(Map.of("#e", "e#" + entryId))
                .expressionAttributeValues(Map.of(":e", AttributeValue.fromN(Long.toString(
                        Instant.now().minusSeconds(1).toEpochMilli())))));
    }

    /** The raw lock item, as DynamoDB stores it. */
    public Map<String, AttributeValue> item(String entity, String namespace) {
        return admin.getItem(b -> b.tableName(table).consistentRead(true)
                .key(Map.of("pk", AttributeValue.fromS(entity), "sk", AttributeValue.fromS(namespace)))).item();
    }

    @Override
    public void close() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
        observer.close();
        admin.close();
    }
}
