package io.dynamolock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.BDDMockito.given;
import static org.mockito.Mockito.mock;

import io.dynamolock.core.LockInfo;
import io.dynamolock.core.LockOperations;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The gauges need only {@link LockOperations}: stubbed here, no DynamoDB. */
class LockGaugesTests {

    @Test
    void countsHeldAndAwaitedLocks() {
        LockOperations locks = mock(LockOperations.class);
        given(locks.activeLocks()).willReturn(List.of(
                new LockInfo("order-1", "default", "pod-a", "id1", 10, true, Instant.now()),
                new LockInfo("order-2", "default", "pod-a", "id2", 11, false, Instant.now()),
                new LockInfo("order-3", "default", "pod-a", "id3", 12, false, Instant.now())));
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new LockGauges(locks).bindTo(registry);

        assertThat(registry.get("dynamolock.locks").tag("state", "holding").gauge().value()).isEqualTo(1);
        assertThat(registry.get("dynamolock.locks").tag("state", "waiting").gauge().value()).isEqualTo(2);
    }
}
