package io.dynamolock.core.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dynamolock.core.DynamoLockException;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockOptionException;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockScope;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.LockWaitTimeoutException;
import io.dynamolock.core.test.FaultInjector;
import io.dynamolock.core.test.FaultInjector.Step;
import io.dynamolock.core.test.LockFixture;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;

/**
 * Lock items that dynamolock never writes, edited by hand or by another tool: an entry whose lease end or ticket is
 * missing or of another type, a lease end centuries ahead. Waiters never loop on them, never wait past their wait,
 * and remove what reads as expired, as they would a crashed process's entry.
 */
@Timeout(60)
class MalformedItemTests {

    /** The TTL of an item that holds a fail-closed entry: 9999-12-31, never. */
    private static final long NEVER_TTL_SECONDS = 253_402_300_799L;

    private final LockFixture fixture = new LockFixture();
    private final FaultInjector requests = new FaultInjector();

    @AfterEach
    void tearDown() throws Exception {
        fixture.close();
    }

    @Test
    void anEntryWithoutALeaseEndIsPurgedByTheNextWaiter() throws Exception {
        put("no-lease-end", Map.of("t#x", AttributeValue.fromN("5")));

        assertTheNextWaiterPurgesItAndHolds("no-lease-end");
    }

    @Test
    void anEntryWhoseTicketAndLeaseEndAreStringsIsShownAndPurgedByTheNextWaiter() throws Exception {
        put("string-ticket", Map.of("t#x", AttributeValue.fromS("5"), "e#x", AttributeValue.fromS("1")));
        assertThat(fixture.queue("string-ticket")).singleElement()
                .satisfies(entry -> assertThat(entry.entryId()).isEqualTo("x"));

        assertTheNextWaiterPurgesItAndHolds("string-ticket");
    }

    private void assertTheNextWaiterPurgesItAndHolds(String entity) throws Exception {
        LockTemplate locks = fixture.template(b -> { }, requests);

        LockHandle lock = within(() -> locks.acquire(entity, Duration.ofSeconds(5)));

        assertThat(lock.fencingToken()).isGreaterThan(5);
        assertThat(requests.attempts(Step.PURGE)).isEqualTo(1);
        lock.release();
        assertThat(fixture.queue(entity)).isEmpty();
    }

    @Test
    void aLeaseEndThatNoPurgeCanMatchCostsAPurgeAPollAndTheWaitEndsOnTime() throws Exception {
        // DynamoDB keeps 5.5 as written; it reads as the expired 5, which a purge's condition never matches.
        put("fraction", Map.of("t#x", AttributeValue.fromN("5"), "e#x", AttributeValue.fromN("5.5")));
        LockTemplate locks = fixture.template(b -> b.pollInterval(Duration.ofMillis(50), Duration.ofMillis(50)),
                requests);
        try {
            assertThatThrownBy(() -> within(() -> locks.acquire("fraction", Duration.ofMillis(500))))
                    .isInstanceOf(LockWaitTimeoutException.class);
            assertThat(requests.attempts(Step.PURGE)).as("after the enqueue's answer and the first one, one a poll")
                    .isBetween(1, requests.attempts(Step.READ) + 2);
        }
        finally {
            fixture.template().breakLock("fraction", null, 5); // ends a waiter that would loop
        }
        assertThat(within(() -> locks.acquire("fraction", Duration.ofSeconds(5))).fencingToken()).isGreaterThan(5);
    }

    @Test
    void aLeaseEndCenturiesAheadKeepsWaitersOutUntilTheirWaitEnds() {
        put("centuries", Map.of("t#x", AttributeValue.fromN("5"), "e#x", AttributeValue.fromN("99999999999999")));
        LockTemplate locks = fixture.template();

        assertThatThrownBy(() -> within(() -> locks.acquire("centuries", Duration.ofMillis(300))))
                .isInstanceOf(LockWaitTimeoutException.class);
        assertThat(fixture.queue("centuries")).extracting(entry -> entry.entryId()).containsExactly("x");
    }

    @Test
    void aCounterPastTheLongRangeNeverLetsTwoCallersHold() throws Exception {
        put("counter", Map.of("next", AttributeValue.fromN(Long.toString(Long.MAX_VALUE))));
        LockTemplate locks = fixture.template();
        LockHandle first = within(() -> locks.acquire("counter", Duration.ofSeconds(5)));

        // Its ticket, 2^63, is no long: read approximately it would be the first's, and both would hold (the message
        // shows the counter as its failed enqueue left it).
        assertThatThrownBy(() -> within(() -> fixture.template().acquire("counter", Duration.ofSeconds(5))))
                .isInstanceOf(DynamoLockException.class).hasMessageContaining("'next'")
                .hasMessageContaining("9223372036854775809").hasMessageContaining("delete the item");

        assertThat(first.isValid()).isTrue();
        assertThat(fixture.queue("counter")).extracting(entry -> entry.ticket()).containsExactly(Long.MAX_VALUE);
        first.release();
    }

    @Test
    void aLiveEntryWithAnUnreadableTicketKeepsEveryoneOut() throws Exception {
        long leaseEnd = System.currentTimeMillis() + 60_000;
        put("fraction-ticket", Map.of("t#x", AttributeValue.fromN("5.5"),
                "e#x", AttributeValue.fromN(Long.toString(leaseEnd))));
        put("string-ticket-live", Map.of("t#x", AttributeValue.fromS("1"),
                "e#x", AttributeValue.fromN(Long.toString(leaseEnd))));

        assertThat(fixture.template().tryAcquire("fraction-ticket")).isEmpty();
        assertThat(fixture.template().tryAcquire("string-ticket-live")).isEmpty();
    }

    @Test
    void anEntryWithAnUnreadableFailClosedLeaseStaysFailClosed() throws Exception {
        put("fail-closed", Map.of("t#x", AttributeValue.fromN("5"), "e#x", AttributeValue.fromN("1"),
                "k#x", AttributeValue.fromS("60000"), "fc", AttributeValue.fromN("1")));

        assertThat(fixture.template().tryAcquire("fail-closed")).as("not purged as a fail-open entry").isEmpty();
        assertThat(fixture.queue("fail-closed")).singleElement().satisfies(entry ->
                assertThat(entry.failClosed()).isTrue());
    }

    @Test
    void aSilentFailClosedEntryWithAnUnreadableTicketMakesWaitersTimeOutNamingTheFix() {
        put("fc-fraction", Map.of("t#x", AttributeValue.fromN("5.5"), "e#x", AttributeValue.fromN("1"),
                "k#x", AttributeValue.fromN("60000"), "fc", AttributeValue.fromN("1")));
        LockTemplate locks = fixture.template();

        assertThatThrownBy(() -> within(() -> locks.acquire("fc-fraction", Duration.ofMillis(300))))
                .isInstanceOf(LockWaitTimeoutException.class).hasMessageContaining("AWS CLI")
                .message().doesNotContain("breakLock(").doesNotContain("renewed since");
        assertThat(fixture.queue("fc-fraction")).extracting(entry -> entry.entryId()).containsExactly("x");

        // The README's removal, which counts it out of fc: the item expires again once unused.
        removeCountedAsTheReadmeSays("fc-fraction");
        locks.acquire(LockRequest.builder("fc-fraction").failClosed(true).build()).release();
        assertThat(Long.parseLong(fixture.item("fc-fraction", "default").get("expiresAt").n()))
                .as("the TTL after the last fail-closed entry left").isLessThan(NEVER_TTL_SECONDS);
    }

    @Test
    void aTimeOutBehindAnUnreadableSilentEntryAndALiveOneSaysTheLiveOneKeepsItOutToo() throws Exception {
        put("fc-and-live", Map.of("t#x", AttributeValue.fromN("5.5"), "e#x", AttributeValue.fromN("1"),
                "k#x", AttributeValue.fromN("60000"), "fc", AttributeValue.fromN("1")));
        CompletableFuture<LockHandle> live = fixture.template().acquireAsync(
                LockRequest.builder("fc-and-live").wait(Duration.ofSeconds(30)).build(), LockScope.empty());
        fixture.awaitQueueLength("fc-and-live", 2);

        assertThatThrownBy(() -> within(() -> fixture.template().acquire("fc-and-live", Duration.ofMillis(300))))
                .isInstanceOf(LockWaitTimeoutException.class).hasMessageContaining("AWS CLI")
                .hasMessageContaining("live entries keep it out as well");
        live.cancel(false);
    }

    @Test
    void aFailClosedEntryTheCounterDoesNotCountIsRemovedAsTheReadmeSaysAndTheItemExpiresAgain() throws Exception {
        put("uncounted", Map.of("t#x", AttributeValue.fromN("5.5"), "e#x", AttributeValue.fromN("1"),
                "k#x", AttributeValue.fromN("60000"),
                "expiresAt", AttributeValue.fromN(Long.toString(NEVER_TTL_SECONDS))));
        Map<String, AttributeValue> key = Map.of("pk", AttributeValue.fromS("uncounted"),
                "sk", AttributeValue.fromS("default"));
        Map<String, String> names = Map.of("#t", "t#x", "#e", "e#x", "#o", "o#x", "#k", "k#x", "#m", "m#x",
                "#w", "w#x");

        // The README's command first: refused, as fc does not count the entry; then the entry alone.
        assertThatThrownBy(() -> fixture.admin().updateItem(b -> b.tableName(fixture.table()).key(key)
                .updateExpression("REMOVE #t, #e, #o, #k, #m, #w ADD #fc :minusOne")
                .conditionExpression("attribute_exists(#k) AND #fc > :zero")
                .expressionAttributeNames(with(names, "#fc", "fc"))
                .expressionAttributeValues(Map.of(":minusOne", AttributeValue.fromN("-1"),
                        ":zero", AttributeValue.fromN("0")))))
                .isInstanceOf(ConditionalCheckFailedException.class);
        fixture.admin().updateItem(b -> b.tableName(fixture.table()).key(key)
                .updateExpression("REMOVE #t, #e, #o, #k, #m, #w").expressionAttributeNames(names));

        fixture.template().acquire("uncounted", Duration.ofSeconds(5)).release();
        assertThat(Long.parseLong(fixture.item("uncounted", "default").get("expiresAt").n()))
                .as("the TTL after the next acquisition").isLessThan(NEVER_TTL_SECONDS);
    }

    /**
     * The README's removal of a counted fail-closed entry takes fc to 0 but leaves the TTL "never" (the command
     * does not touch it): the lock's next enqueue, refused the TTL it would lower, settles it in a request of its
     * own, so the item expires again once unused.
     */
    @Test
    void aCountedFailClosedEntryRemovedByTheReadmesCommandLeavesAnItemThatExpiresAfterTheNextEnqueue() {
        put("counted", Map.of("t#x", AttributeValue.fromN("5"), "e#x", AttributeValue.fromN("1"),
                "k#x", AttributeValue.fromN("60000"), "fc", AttributeValue.fromN("1"),
                "expiresAt", AttributeValue.fromN(Long.toString(NEVER_TTL_SECONDS))));
        removeCountedAsTheReadmeSays("counted");
        assertThat(fixture.item("counted", "default").get("fc").n()).isEqualTo("0");

        LockTemplate locks = fixture.template(b -> { }, requests);
        LockHandle lock = locks.acquire("counted", Duration.ZERO);

        assertThat(requests.attempts(Step.LOWER_TTL)).as("the enqueue's own write may not lower it").isEqualTo(1);
        assertThat(Long.parseLong(fixture.item("counted", "default").get("expiresAt").n()))
                .as("finite while the lock is held").isLessThan(NEVER_TTL_SECONDS);
        lock.release();
        assertThat(Long.parseLong(fixture.item("counted", "default").get("expiresAt").n()))
                .as("and after its release").isLessThan(NEVER_TTL_SECONDS);
    }

    /** The README's AWS CLI removal of the fail-closed entry {@code x} that {@code fc} counts, sent by the SDK. */
    private void removeCountedAsTheReadmeSays(String entity) {
        fixture.admin().updateItem(b -> b.tableName(fixture.table())
                .key(Map.of("pk", AttributeValue.fromS(entity), "sk", AttributeValue.fromS("default")))
                .updateExpression("REMOVE #t, #e, #o, #k, #m, #w ADD #fc :minusOne")
                .conditionExpression("attribute_exists(#k) AND #fc > :zero")
                .expressionAttributeNames(Map.of("#t", "t#x", "#e", "e#x", "#o", "o#x", "#k", "k#x", "#m", "m#x",
                        "#w", "w#x", "#fc", "fc"))
                .expressionAttributeValues(Map.of(":minusOne", AttributeValue.fromN("-1"),
                        ":zero", AttributeValue.fromN("0"))));
    }

    private static Map<String, String> with(Map<String, String> names, String name, String attribute) {
        Map<String, String> more = new HashMap<>(names);
        more.put(name, attribute);
        return more;
    }

    @Test
    void unreadablePermitsBesideASilentFailClosedEntryAreRefusedAndRemoveNothing() {
        put("fc-permits", Map.of("t#x", AttributeValue.fromN("5"), "e#x", AttributeValue.fromN("1"),
                "k#x", AttributeValue.fromN("60000"), "fc", AttributeValue.fromN("1"),
                "permits", AttributeValue.fromN("1.5")));
        LockTemplate locks = fixture.template();

        assertThatThrownBy(() -> within(() -> locks.acquire("fc-permits", Duration.ofMillis(300))))
                .isInstanceOf(LockOptionException.class).hasMessageContaining("not a positive integer");
        assertThat(fixture.queue("fc-permits")).extracting(entry -> entry.entryId()).containsExactly("x");
    }

    private void put(String entity, Map<String, AttributeValue> entry) {
        Map<String, AttributeValue> item = new HashMap<>(entry);
        item.put("pk", AttributeValue.fromS(entity));
        item.put("sk", AttributeValue.fromS("default"));
        item.putIfAbsent("next", AttributeValue.fromN("10"));
        fixture.admin().putItem(b -> b.tableName(fixture.table()).item(item));
    }

    /** The call's outcome, or a failure if it has none within 10 s (a waiter that loops never returns). */
    private static LockHandle within(java.util.function.Supplier<LockHandle> call) throws Exception {
        try {
            return CompletableFuture.supplyAsync(call).get(10, TimeUnit.SECONDS);
        }
        catch (ExecutionException ex) {
            throw ex.getCause() instanceof Exception cause ? cause : ex;
        }
    }
}
