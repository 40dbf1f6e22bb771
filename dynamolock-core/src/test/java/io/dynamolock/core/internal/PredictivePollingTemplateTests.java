package io.dynamolock.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.test.Await;
import io.dynamolock.core.test.LockFixture;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Predictive polling through real templates: releases record their history in the item, and a holder that
 * holds far longer than that history keeps its lease, while the queue behind it keeps its order.
 */
class PredictivePollingTemplateTests {

    private final LockFixture fixture = new LockFixture();
    private final String entity = "report-" + System.nanoTime();

    @AfterEach
    void close() throws Exception {
        fixture.close();
    }

    @Test
    void aHolderThatHoldsFarLongerThanItsHistoryKeepsItsLeaseAndTheQueueItsOrder() throws Exception {
        AtomicInteger lost = new AtomicInteger();
        LockTemplate a = fixture.template(b -> b.leaseDuration(Duration.ofSeconds(1))
                .heartbeatInterval(Duration.ofMillis(250)));
        LockTemplate b = fixture.template(builder -> { });
        LockTemplate c = fixture.template(builder -> { });
        for (int i = 0; i < 10; i++) {
            (i % 2 == 0 ? a : b).acquire(entity, Duration.ofSeconds(10)).release(); // a history of short holds
        }
        Map<String, AttributeValue> item = fixture.item(entity, "default");
        long interval = Long.parseLong(item.get(PredictivePolling.RELEASE_INTERVAL).n());
        assertThat(item.get(PredictivePolling.LAST_RELEASE)).isNotNull();

        LockHandle held = a.acquire(entity, Duration.ZERO);
        held.onLost(lock -> lost.incrementAndGet());
        CompletableFuture<LockHandle> second = b.acquireAsync(LockRequest.builder(entity).wait(Duration.ofSeconds(30)).build());
        fixture.awaitQueueLength(entity, 2);
        CompletableFuture<LockHandle> third = c.acquireAsync(LockRequest.builder(entity).wait(Duration.ofSeconds(30)).build());
        fixture.awaitQueueLength(entity, 3);

        // The hold itself: three leases, hundreds of times the history's interval, with two waiters polling.
        Thread.sleep(3000);
        assertThat(interval * 20).as("the history: short holds").isLessThan(3000);
        assertThat(held.isValid()).as("renewed all along").isTrue();
        assertThat(lost).hasValue(0);
        assertThat(second).isNotDone();
        assertThat(third).isNotDone();

        held.release();
        LockHandle next = second.get(30, TimeUnit.SECONDS);
        assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        Await.notDoneWithin(Duration.ofMillis(500), "it is behind the second, whatever the history predicts",
                third);
        next.release();
        LockHandle last = third.get(30, TimeUnit.SECONDS);
        assertThat(last.fencingToken()).isGreaterThan(next.fencingToken());
        last.release();
    }
}
