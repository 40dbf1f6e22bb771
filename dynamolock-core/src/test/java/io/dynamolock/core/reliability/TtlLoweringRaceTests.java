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

    /**
     * Two fail-closed entries leave at once, and a long-lease caller enqueues before the last removal lands: that
     * removal sets a finite TTL in its own write (an hour from now, short of the long lease), so the item it
     * returned, with the long lease in it, must raise it again; no Lower TTL is needed.
     */
    @Test
    void theLastFailClosedRemovalNeverUndercutsALongLeaseThatEnqueuedMeanwhile() throws Exception {
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

            // Both leave at once: each one's "last fail-closed entry" write sees fc = 2 and is refused; then each
            // sends the removal of one of several, which only one can land (fc = 1): the other is refused and
            // sends the last one's write again. The long lease enqueues just before that one.
            AtomicInteger removes = new AtomicInteger();
            CyclicBarrier firstWrites = new CyclicBarrier(2);
            CountDownLatch firstAnswers = new CountDownLatch(2);
            CountDownLatch longLeaseEnqueued = new CountDownLatch(1);
            AtomicReference<LockHandle> longLease = new AtomicReference<>();
            faultsA.onAttempt(Step.REMOVE, request -> {
                int attempt = removes.getAndIncrement();
                if (attempt < 2) {
                    try {
                        firstWrites.await(10, TimeUnit.SECONDS);
                    }
                    catch (Exception ex) {
                        throw new IllegalStateException(ex);
                    }
                }
                else if (attempt < 4) {
                    FaultInjector.await(firstAnswers, 10);
                }
                else if (attempt == 4) {
                    new Thread(() -> longLease.set(b.acquire(entity, Duration.ofSeconds(30)))).start();
                    FaultInjector.await(longLeaseEnqueued, 10);
                }
            });
            faultsA.onAnswer(Step.REMOVE, request -> firstAnswers.countDown());
            faultsB.onAnswer(Step.ENQUEUE, request -> {
                if (!items.read(entity, "default").of("b").isEmpty()) {
                    longLeaseEnqueued.countDown(); // its first write may be refused ("never" kept its TTL out)
                }
            });

            Thread release = new Thread(f1::release);
            release.start();
            f2.cancel(false);
            release.join(20_000);
            Await.until(Duration.ofSeconds(20), "long lease held", () -> longLease.get() != null);

            // The forced interleaving happened, and no follow-up had to let the item expire.
            assertThat(removes.get()).as("removal writes: two refused, one landed, one refused, one landed")
                    .isEqualTo(5);
            assertThat(longLeaseEnqueued.getCount()).as("the long lease enqueued before the last removal").isZero();
            assertThat(faultsA.attempts(Step.LOWER_TTL)).as("Lower TTL requests").isZero();
            LockItems.Item item = items.read(entity, "default");
            LockItems.Entry entry = item.entries().values().iterator().next();
            assertThat(item.entries()).hasSize(1);
            assertThat(longLease.get().isValid()).isTrue();
            // R9: TTL at least 55 minutes past every live entry's lease end, once the removal that found the long
            // lease in its answer has raised it (a leaving waiter's removal runs in the background: its Raise TTL
            // may still be on its way when the long lease is held).
            Await.until(Duration.ofSeconds(10), "the TTL raised past the long lease",
                    () -> items.read(entity, "default").ttlEpochSeconds() * 1000
                            >= entry.expiresAtMillis() + Duration.ofMinutes(55).toMillis());
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
