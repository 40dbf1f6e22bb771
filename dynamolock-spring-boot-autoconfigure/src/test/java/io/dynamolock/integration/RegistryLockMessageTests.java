package io.dynamolock.integration;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dynamolock.core.test.LockFixture;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Spring Integration and its users log the registry's exceptions: a key's line break must not forge a line. */
class RegistryLockMessageTests {

    private final LockFixture fixture = new LockFixture();
    private final DynamoLockRegistry registry = new DynamoLockRegistry(fixture.template());

    @AfterEach
    void close() throws Exception {
        fixture.close();
    }

    /** RegistryLock.unlock() by a thread that does not hold it. */
    @Test
    void unlockWithoutHoldingEscapesTheKey() {
        Lock lock = registry.obtain("order-1\n12:00:00.000 WARN forged");
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class)
                .message().contains("'order-1\\u000a12:00:00.000 WARN forged'").doesNotContain("\n");
    }

    /** DynamoLockRegistry.renewLock by a thread that does not hold it. */
    @Test
    void renewWithoutHoldingEscapesTheKey() {
        assertThatThrownBy(() -> registry.renewLock("order-1\r\nforged"))
                .isInstanceOf(IllegalMonitorStateException.class).message().contains("'order-1\\u000d\\u000aforged'")
                .doesNotContain("\n", "\r");
    }
}
