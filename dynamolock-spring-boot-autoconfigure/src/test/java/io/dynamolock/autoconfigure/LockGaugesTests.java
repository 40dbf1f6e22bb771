package io.dynamolock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.BDDMockito.given;
import static org.mockito.Mockito.mock;

import io.dynamolock.core.LockInfo;
import io.dynamolock.core.LockMode;
import io.dynamolock.core.LockOperations;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The gauges need only {@link LockOperations}: stubbed here, no DynamoDB. */
class LockGaugesTests {

    @Test
    void countsHeldAndAwaitedLocksByMode() {
        LockOperations locks = mock(LockOperations.class);
        given(locks.activeLocks()).willReturn(List.of(
                new LockInfo("order-1", "default", "pod-a", "id1", 10, true, Instant.now(), LockMode.EXCLUSIVE),
                new LockInfo("order-2", "default", "pod-a", "id2", 11, false, Instant.now(), LockMode.EXCLUSIVE),
                new LockInfo("order-3", "default", "pod-a", "id3", 12, false, Instant.now(), LockMode.EXCLUSIVE),
                new LockInfo("price-1", "default", "pod-a", "id4", 13, true, Instant.now(), LockMode.SHARED)));
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new LockGauges(locks).bindTo(registry);

        assertThat(gauge(registry, "holding", "exclusive")).isEqualTo(1);
        assertThat(gauge(registry, "waiting", "exclusive")).isEqualTo(2);
        assertThat(gauge(registry, "holding", "shared")).isEqualTo(1);
        assertThat(gauge(registry, "waiting", "shared")).isZero();
    }

    private static double gauge(SimpleMeterRegistry registry, String state, String mode) {
        return registry.get("dynamolock.locks").tag("state", state).tag("mode", mode).gauge().value();
    }
}
