package io.dynamolock.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.test.DynamoDbLocal;
import io.dynamolock.core.test.LockFixture;
import io.dynamolock.core.test.PausingInterceptor;
import io.dynamolock.core.test.PausingInterceptor.Point;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;

/**
 * The late-enqueue race of the published design (ticket and queue row written by two
 * requests), forced with a hook between protocol steps. The published layout lets two
 * callers hold at once under it; the one-item layout cannot.
 */
@Timeout(60)
class LateEnqueueRaceTests {

    private final LockFixture fixture = new LockFixture();
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private final AtomicInteger holders = new AtomicInteger();
    private final AtomicInteger mostHolders = new AtomicInteger();

    @AfterEach
    void tearDown() throws Exception {
        pool.shutdownNow();
        fixture.close();
    }

    @Test
    void publishedTwoRequestLayoutGrantsTwoHoldersUnderTheInterleaving() throws Exception {
        PausingInterceptor betweenTicketAndRow = new PausingInterceptor("PutItem", Point.BEFORE_SEND);
        try (DynamoDbClient hooked = DynamoDbLocal.shared().client(betweenTicketAndRow);
                DynamoDbClient plain = DynamoDbLocal.shared().client()) {
            assertTwoHolders(new PublishedDesign(fixture.table(), hooked), new PublishedDesign(fixture.table(), plain),
                    betweenTicketAndRow);
        }
    }

    private void assertTwoHolders(PublishedDesign a, PublishedDesign b, PausingInterceptor betweenTicketAndRow)
            throws Exception {

        betweenTicketAndRow.arm();
        Future<Boolean> first = pool.submit(() -> a.tryHold("A")); // A: ticket 1, then stalls before its row
        betweenTicketAndRow.awaitPaused();
        assertThat(b.tryHold("B")).as("B: ticket 2, row, query -> [2]: B holds").isTrue();
        enter();
        betweenTicketAndRow.resume();
        assertThat(first.get(30, TimeUnit.SECONDS)).as("A: row, query -> [1, 2]: A holds too").isTrue();
        enter();

        assertThat(mostHolders.get()).isEqualTo(2);
    }

    @Test
    void oneItemLayoutHasOneHolderWhenTheFirstCallerStallsAfterEnqueue() throws Exception {
        PausingInterceptor afterEnqueue = new PausingInterceptor("UpdateItem", Point.AFTER_ANSWER);
        LockTemplate a = fixture.template(b -> { }, afterEnqueue);
        LockTemplate b = fixture.template();

        afterEnqueue.arm();
        Future<LockHandle> first = pool.submit(() -> holdWhileCounting(a));
        afterEnqueue.awaitPaused(); // A's ticket and entry are in the item; A has not looked at the answer
        Future<LockHandle> second = pool.submit(() -> holdWhileCounting(b));
        fixture.awaitQueueLength("race", 2);
        assertThat(second).as("B sees A ahead and waits").isNotDone();

        afterEnqueue.resume();
        LockHandle aLock = first.get(30, TimeUnit.SECONDS);
        assertThat(second).isNotDone();
        leave(aLock);
        LockHandle bLock = second.get(30, TimeUnit.SECONDS);
        leave(bLock);

        assertThat(mostHolders.get()).isEqualTo(1);
        assertThat(bLock.fencingToken()).isGreaterThan(aLock.fencingToken());
    }

    @Test
    void oneItemLayoutHasOneHolderWhenTheFirstCallerStallsBeforeEnqueue() throws Exception {
        PausingInterceptor beforeEnqueue = new PausingInterceptor("UpdateItem", Point.BEFORE_SEND);
        LockTemplate a = fixture.template(b -> { }, beforeEnqueue);
        LockTemplate b = fixture.template();

        beforeEnqueue.arm();
        Future<LockHandle> first = pool.submit(() -> holdWhileCounting(a)); // A asked first, but stalls
        beforeEnqueue.awaitPaused();
        LockHandle bLock = holdWhileCounting(b); // B's enqueue lands first: B is served first
        beforeEnqueue.resume();
        fixture.awaitQueueLength("race", 2);
        assertThat(first).as("A's ticket is behind B's").isNotDone();
        leave(bLock);
        LockHandle aLock = first.get(30, TimeUnit.SECONDS);
        leave(aLock);

        assertThat(mostHolders.get()).isEqualTo(1);
        assertThat(aLock.fencingToken()).isGreaterThan(bLock.fencingToken());
    }

    private LockHandle holdWhileCounting(LockTemplate locks) {
        LockHandle lock = locks.acquire("race", Duration.ofSeconds(30));
        enter();
        return lock;
    }

    private void leave(LockHandle lock) {
        holders.decrementAndGet();
        lock.release();
    }

    private void enter() {
        mostHolders.accumulateAndGet(holders.incrementAndGet(), Math::max);
    }

    /**
     * The published design, reduced to what the race needs: an atomic counter item, then a queue row
     * per waiter, then a strongly consistent query; the caller holds if its row is first.
     */
    private static final class PublishedDesign {

        private final String table;
        private final DynamoDbClient client;

        PublishedDesign(String table, DynamoDbClient client) {
            this.table = table;
            this.client = client;
        }

        boolean tryHold(String owner) {
            long ticket = Long.parseLong(client.updateItem(b -> b.tableName(table)
                    .key(Map.of("pk", AttributeValue.fromS("published-counter"), "sk", AttributeValue.fromS("counter")))
                    .updateExpression("ADD ticketNumber :one")
                    .expressionAttributeValues(Map.of(":one", AttributeValue.fromN("1")))
                    .returnValues(ReturnValue.UPDATED_NEW)).attributes().get("ticketNumber").n());
            String sortKey = "ns/" + String.format("%038d", ticket);
            client.putItem(b -> b.tableName(table).item(Map.of("pk", AttributeValue.fromS("published-order"),
                    "sk", AttributeValue.fromS(sortKey), "owner", AttributeValue.fromS(owner))));
            List<Map<String, AttributeValue>> rows = client.query(b -> b.tableName(table).consistentRead(true)
                    .keyConditionExpression("pk = :pk")
                    .expressionAttributeValues(Map.of(":pk", AttributeValue.fromS("published-order")))).items();
            return rows.get(0).get("sk").s().equals(sortKey);
        }
    }
}
