package io.dynamolock.core.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.test.Await;
import io.dynamolock.core.test.FaultInjector;
import io.dynamolock.core.test.FaultInjector.Step;
import io.dynamolock.core.test.LockItems;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * R9: the item's TTL is never earlier than any live entry's lease end plus a margin. A "lower TTL" write is
 * computed from the item one write returned; an entry that enqueues after that item was read is not in it.
 */
class TtlLoweringRaceTests extends LockTableTestSupport {

    @Test
    void aLowerTtlComputedBeforeALongLeaseEnqueuedNeverUndercutsThatLease() throws Exception {
        String entity = "ttl-race-" + UUID.randomUUID();
        FaultInjector faultsA = new FaultInjector();
        FaultInjector faultsB = new FaultInjector();
        DynamoDbClient clientA = faultsA.clientFor(dynamo, 1);
        DynamoDbClient clientB = faultsB.clientFor(dynamo, 1);
        LockTemplate a = LockTemplate.builder(clientA).tableName(table).ownerName("a")
                .leaseDuration(Duration.ofSeconds(2)).heartbeatInterval(Duration.ofMillis(500)).build();
        // A long lease, renewed every hour (half the lease, the default).
        LockTemplate b = LockTemplate.builder(clientB).tableName(table).ownerName("b")
                .leaseDuration(Duration.ofHours(2)).build();
        try {
            // Two fail-closed entries: a holder and a waiter behind it (fc = 2).
            LockHandle f1 = a.acquire(LockRequest.builder(entity).failClosed(true).build());
            CompletableFuture<LockHandle> f2 = a.acquireAsync(LockRequest.builder(entity).failClosed(true)
                    .wait(Duration.ofMinutes(1)).build());
            Await.until(Duration.ofSeconds(10), "two entries", () -> items.read(entity, "default").entries().size() == 2);

            // Both leave at once: each one's "last fail-closed entry" write sees fc = 2 and is refused, then both
            // plain removals land, the second leaving fc = 0 with the TTL still "never".
            AtomicInteger removes = new AtomicInteger();
            CyclicBarrier firstWrites = new CyclicBarrier(2);
            CountDownLatch firstAnswers = new CountDownLatch(2);
            faultsA.onAttempt(Step.REMOVE, request -> {
                if (removes.getAndIncrement() < 2) {
                    try {
                        firstWrites.await(10, TimeUnit.SECONDS);
                    }
                    catch (Exception ex) {
                        throw new IllegalStateException(ex);
                    }
                }
                else {
                    FaultInjector.await(firstAnswers, 10);
                }
            });
            faultsA.onAnswer(Step.REMOVE, request -> firstAnswers.countDown());

            // While the TTL is "never" and no fail-closed entry is left, a long-lease caller enqueues; its own
            // "lower TTL" lands after the one computed before it joined.
            CountDownLatch longLeaseLowering = new CountDownLatch(1);
            CountDownLatch firstLoweringAnswered = new CountDownLatch(1);
            AtomicReference<LockHandle> longLease = new AtomicReference<>();
            AtomicInteger lowerings = new AtomicInteger();
            faultsA.onAttempt(Step.LOWER_TTL, request -> {
                if (lowerings.getAndIncrement() == 0) {
                    new Thread(() -> longLease.set(b.acquire(entity, Duration.ofSeconds(30)))).start();
                    FaultInjector.await(longLeaseLowering, 10);
                }
            });
            faultsA.onAnswer(Step.LOWER_TTL, request -> firstLoweringAnswered.countDown());
            faultsB.onAttempt(Step.LOWER_TTL, request -> {
                longLeaseLowering.countDown();
                FaultInjector.await(firstLoweringAnswered, 10);
            });

            Thread release = new Thread(f1::release);
            release.start();
            f2.cancel(false);
            release.join(20_000);
            Await.until(Duration.ofSeconds(20), "long lease held", () -> longLease.get() != null);

            // The forced interleaving happened: A's lowering waited for B's to be sent, and B's for A's answer.
            assertThat(lowerings.get()).as("A's lowerings").isPositive();
            assertThat(longLeaseLowering.getCount()).as("B's lowering sent while A's waited").isZero();
            assertThat(firstLoweringAnswered.getCount()).as("A's lowering answered before B's was sent").isZero();
            LockItems.Item item = items.read(entity, "default");
            LockItems.Entry entry = item.entries().values().iterator().next();
            assertThat(item.entries()).hasSize(1);
            assertThat(longLease.get().isValid()).isTrue();
            // R9: TTL at least 55 minutes past every live entry's lease end.
            assertThat(item.ttlEpochSeconds() * 1000)
                    .as("TTL %s s vs the long lease ending %s ms", item.ttlEpochSeconds(), entry.expiresAtMillis())
                    .isGreaterThanOrEqualTo(entry.expiresAtMillis() + Duration.ofMinutes(55).toMillis());
        }
        finally {
            faultsA.clear();
            faultsB.clear();
            a.close();
            b.close();
            clientA.close();
            clientB.close();
        }
    }
}
