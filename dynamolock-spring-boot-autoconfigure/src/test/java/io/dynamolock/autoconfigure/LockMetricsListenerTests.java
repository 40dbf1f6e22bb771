package io.dynamolock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.test.Await;
import io.dynamolock.core.test.LockFixture;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What {@link LockMetricsListener} counts, on DynamoDB Local. */
@Timeout(60)
class LockMetricsListenerTests {

    private final LockFixture fixture = new LockFixture();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

    @AfterEach
    void tearDown() throws Exception {
        fixture.close();
    }

    /** A caller that gives up (a WebFlux client gone, a Mono's time-out) is no failed DynamoDB request. */
    @Test
    void aCancelledAcquisitionIsCountedAsCancelledNotAsAnError() throws Exception {
        LockTemplate locks = fixture.template(b -> b.listener(new LockMetricsListener(meters)));
        LockHandle held = locks.acquire(LockRequest.of("cancelled"));
        CompletableFuture<LockHandle> waiter = locks.acquireAsync(LockRequest.of("cancelled"));
        fixture.awaitQueueLength("cancelled", 2);
        waiter.cancel(true);
        Await.until(Duration.ofSeconds(30), "both acquisitions counted",
                () -> meters.find("dynamolock.acquire").timers().stream().mapToLong(Timer::count).sum() == 2);
        held.release();

        assertThat(meters.find("dynamolock.acquire").tag("outcome", "error").timer()).isNull();
        assertThat(meters.get("dynamolock.acquire").tag("outcome", "cancelled").timer().count()).isOne();
    }
}
