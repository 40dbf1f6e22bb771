package io.dynamolock.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.test.Await;
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
import org.junit.jupiter.api.Tag;
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

    /**
     * A demonstration, not coverage: {@link PublishedDesign} is the rejected layout, written here, so no change to
     * dynamolock can make this fail. It shows that the hook forces the interleaving the two tests below survive.
     */
    @Test
    @Tag("demonstration")
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
        // A's ticket and entry are in the item; A has not looked at the answer. B sees A ahead and waits.
        oneHolderWhileTheFirstCallerStalls(Point.AFTER_ANSWER);
    }

    @Test
    void oneItemLayoutHasOneHolderWhenTheFirstCallerStallsBeforeEnqueue() throws Exception {
        // A asked first, but stalls: B's enqueue lands first, so B is served first.
        oneHolderWhileTheFirstCallerStalls(Point.BEFORE_SEND);
    }

    /**
     * A's enqueue stalls at {@code point} while B asks for the same lock. Whoever's enqueue landed first is
     * served first, the other only after it left, with a later fencing token.
     */
    private void oneHolderWhileTheFirstCallerStalls(Point point) throws Exception {
        PausingInterceptor stall = new PausingInterceptor("UpdateItem", point);
        LockTemplate a = fixture.template(b -> { }, stall);
        LockTemplate b = fixture.template();

        stall.arm();
        Future<LockHandle> stalled = pool.submit(() -> holdWhileCounting(a));
        stall.awaitPaused();
        Future<LockHandle> other = pool.submit(() -> holdWhileCounting(b));
        boolean stalledLanded = point == Point.AFTER_ANSWER;
        if (stalledLanded) {
            fixture.awaitQueueLength("race", 2);
        }
        else {
            other.get(30, TimeUnit.SECONDS);
        }
        stall.resume();
        fixture.awaitQueueLength("race", 2);

        Future<LockHandle> firstServed = stalledLanded ? stalled : other;
        Future<LockHandle> secondServed = stalledLanded ? other : stalled;
        LockHandle first = firstServed.get(30, TimeUnit.SECONDS);
        Await.notDoneWithin(Duration.ofMillis(500), "the later ticket waits", secondServed);
        leave(first);
        LockHandle second = secondServed.get(30, TimeUnit.SECONDS);
        leave(second);

        assertThat(mostHolders.get()).isEqualTo(1);
        assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
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
