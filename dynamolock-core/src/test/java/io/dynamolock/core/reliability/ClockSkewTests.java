package io.dynamolock.core.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.LockWaitTimeoutException;
import io.dynamolock.core.test.FaultInjector;
import io.dynamolock.core.test.FaultInjector.Fault;
import io.dynamolock.core.test.FaultInjector.Step;
import io.dynamolock.core.test.FencedWrite;
import io.dynamolock.core.test.LockWorkerMain;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Owners whose wall clocks disagree ({@code LockTemplate.Builder.clock(Clock.offset(...))}).
 * Expiry times are written by the owner's clock and judged by the reader's, so the protocol
 * tolerates a skew smaller than (lease - heartbeat interval): 2.5 s here, with a 3 s lease and
 * 0.5 s heartbeat; the tests use 1.5 s, leaving 1 s for a late heartbeat on a loaded machine. What larger skews do is shown too, and written down in
 * {@code docs/failure-modes.md}.
 */
class ClockSkewTests extends SharedTablesTestSupport {

    static final Duration LEASE = Duration.ofSeconds(3);
    static final Duration HEARTBEAT = Duration.ofMillis(500);
    static final Duration SKEW = Duration.ofMillis(1500);
    static final long MAX_POLL_MS = 1000;
    static final long MARGIN_MS = 2000;


    final List<LockTemplate> templates = new ArrayList<>();
    final List<DynamoDbClient> clients = new ArrayList<>();

    @AfterEach
    void close() {
        templates.forEach(LockTemplate::close);
        clients.forEach(DynamoDbClient::close);
    }

    LockTemplate template(DynamoDbClient client, String owner, Duration skew) {
        LockTemplate template = LockTemplate.builder(client).tableName(table).ownerName(owner)
                .leaseDuration(LEASE).heartbeatInterval(HEARTBEAT)
                .pollInterval(Duration.ofMillis(50), Duration.ofMillis(MAX_POLL_MS))
                .clock(Clock.offset(Clock.systemUTC(), skew))
                .build();
        templates.add(template);
        return template;
    }

    static String entity() {
        return "skew-" + UUID.randomUUID();
    }

    /** One holder and one waiter on their own lock, with their own clocks. */
    record Pair(String entity, Duration holderSkew, Duration waiterSkew, LockHandle held, AtomicBoolean lost,
            LockTemplate waiter) {
    }

    @Test
    void skewSmallerThanLeaseMinusHeartbeatNeverTakesAHeartbeatingLease() throws Exception {
        List<Pair> pairs = new ArrayList<>();
        for (Duration[] skews : List.of(new Duration[] {SKEW, Duration.ZERO}, new Duration[] {SKEW.negated(), Duration.ZERO},
                new Duration[] {Duration.ZERO, SKEW}, new Duration[] {Duration.ZERO, SKEW.negated()})) {
            String entity = entity();
            LockHandle held = template(client, "holder", skews[0]).acquire(entity, LEASE);
            AtomicBoolean lost = new AtomicBoolean();
            held.onLost(l -> lost.set(true));
            pairs.add(new Pair(entity, skews[0], skews[1], held, lost, template(client, "waiter", skews[1])));
        }

        // Every waiter waits two leases (four heartbeats) at once, on its own lock; none may get in.
        List<CompletableFuture<Throwable>> waits = pairs.stream().map(p -> CompletableFuture.supplyAsync(() -> {
            try {
                p.waiter().acquire(p.entity(), LEASE.multipliedBy(2)).release();
                return (Throwable) null;
            }
            catch (RuntimeException ex) {
                return ex;
            }
        })).toList();

        for (int i = 0; i < pairs.size(); i++) {
            Pair pair = pairs.get(i);
            String described = "holder skew " + pair.holderSkew() + ", waiter skew " + pair.waiterSkew();
            assertThat(waits.get(i).get(30, TimeUnit.SECONDS)).as(described).isInstanceOf(LockWaitTimeoutException.class);
            assertThat(pair.lost()).as(described).isFalse();
            assertThat(pair.held().isValid()).as(described).isTrue();
            pair.held().release();
            try (LockHandle next = pair.waiter().acquire(pair.entity(), LEASE)) {
                assertThat(next.fencingToken()).isGreaterThan(pair.held().fencingToken());
            }
            assertThat(items.read(pair.entity(), "default").entries()).isEmpty();
        }
    }

    @ParameterizedTest(name = "holder clock {0} ms off")
    @ValueSource(longs = {1500, -1500})
    void holderThatStopsRenewingIsTakenOverOneLeaseAfterItsLastRenewalShiftedByItsSkew(long skewMs) throws Exception {
        String entity = entity();
        FaultInjector holderFaults = new FaultInjector();
        DynamoDbClient holderClient = holderFaults.clientFor(dynamo, 1);
        FaultInjector waiterHooks = new FaultInjector();
        DynamoDbClient waiterClient = waiterHooks.clientFor(dynamo, 1);
        clients.add(holderClient);
        clients.add(waiterClient);
        LockTemplate holder = template(holderClient, "holder", Duration.ofMillis(skewMs));
        LockTemplate waiter = template(waiterClient, "waiter", Duration.ZERO);
        AtomicLong expirySeen = new AtomicLong();
        waiterHooks.onAttempt(Step.PURGE, request -> expirySeen.set(Long.parseLong(
                ((software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest) request)
                        .expressionAttributeValues().get(":e0").n())));

        LockHandle held = holder.acquire(entity, LEASE);
        CompletableFuture<Long> lostAt = new CompletableFuture<>();
        held.onLost(l -> lostAt.complete(System.currentTimeMillis()));
        holderFaults.failAlways(Step.RENEW, Fault.THROTTLE_BEFORE); // a partition: renewals stop landing

        LockHandle next = waiter.acquire(entity, Duration.ofSeconds(30));
        long grantWall = System.currentTimeMillis();
        boolean holderValidAtGrant = held.isValid();
        long lost = lostAt.get(30, TimeUnit.SECONDS);

        // The waiter purged the entry once its (true) clock passed the expiry the holder's clock wrote.
        long expiryByHolderClock = expirySeen.get();
        long trueExpiry = expiryByHolderClock - skewMs;
        System.out.printf("holder skew %+d ms: taken over %d ms after the true end of its lease (written expiry + %d"
                        + " ms); holder valid at the takeover: %s; lost-lease callback %+d ms from the takeover%n",
                skewMs, grantWall - trueExpiry, grantWall - expiryByHolderClock, holderValidAtGrant, lost - grantWall);
        assertThat(grantWall).isGreaterThanOrEqualTo(expiryByHolderClock);
        assertThat(grantWall - expiryByHolderClock).isLessThan(MAX_POLL_MS + MARGIN_MS);
        if (skewMs > 0) {
            // Clock ahead: its lease looks longer to others; it knows it lost it before anyone takes over.
            assertThat(holderValidAtGrant).isFalse();
            assertThat(lost).isLessThanOrEqualTo(grantWall);
        }
        else {
            // Clock behind: others may take over up to the skew before its isValid() turns false. Only the fence
            // stops its writes in that window.
            assertThat(lost - grantWall).isLessThan(-skewMs + MARGIN_MS);
        }
        assertFenced(entity, held, next);
        next.release();
    }

    @ParameterizedTest(name = "holder clock {0} ms off, waiter clock {1} ms off")
    @CsvSource({"0, 4000", "-4000, 0"})
    void skewLargerThanTheLeaseLosesAHeartbeatingLease(long holderSkewMs, long waiterSkewMs) throws Exception {
        // Documented, not desired: the waiter sees a fresh expiry as past and purges a healthy holder.
        String entity = entity();
        LockTemplate holder = template(client, "holder", Duration.ofMillis(holderSkewMs));
        LockTemplate waiter = template(client, "waiter", Duration.ofMillis(waiterSkewMs));
        LockHandle held = holder.acquire(entity, LEASE);
        CompletableFuture<LockHandle> lost = new CompletableFuture<>();
        held.onLost(lost::complete);

        LockHandle next = waiter.acquire(entity, Duration.ofSeconds(30));

        assertThat(lost.get(30, TimeUnit.SECONDS)).isSameAs(held);
        assertThat(held.isValid()).isFalse();
        assertFenced(entity, held, next);
        next.release();
        held.release();
        assertThat(items.read(entity, "default").entries()).isEmpty();
    }

    /** The new holder claims the protected item; the old holder's write is then rejected. */
    void assertFenced(String entity, LockHandle old, LockHandle current) {
        Map<String, software.amazon.awssdk.services.dynamodb.model.AttributeValue> key = LockWorkerMain.counterKey(entity);
        assertThat(FencedWrite.update(client, data, key, "", Map.of(), Map.of(), current.fencingToken())).isTrue();
        assertThat(FencedWrite.update(client, data, key, "#v = :v", Map.of("#v", "value"),
                Map.of(":v", software.amazon.awssdk.services.dynamodb.model.AttributeValue.fromS("stale")),
                old.fencingToken())).isFalse();
    }
}
