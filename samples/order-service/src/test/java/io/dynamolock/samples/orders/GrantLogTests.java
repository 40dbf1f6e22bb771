package io.dynamolock.samples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.LockHandle;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * GrantLog sees every grant of the service, API requests too: it keeps only the recent ones, so a long-running
 * instance neither grows without bound nor pays more per grant as grants add up.
 */
class GrantLogTests {

    private final GrantLog grantLog = new GrantLog();

    @Test
    void keepsTheLatestGrantsOfAnEntity() {
        int grants = GrantLog.GRANTS_PER_ENTITY + 10;
        LongStream.rangeClosed(1, grants).forEach(token -> grant("busy-order", token));

        assertThat(grantLog.grantsOf("busy-order")).hasSize(GrantLog.GRANTS_PER_ENTITY)
                .extracting(GrantLog.Grant::ticket).startsWith(11L).endsWith((long) grants);
    }

    @Test
    void forgetsTheEntitiesLockedLongestAgo() {
        grant("first-order", 1);
        LongStream.rangeClosed(1, GrantLog.ENTITIES).forEach(token -> grant("order-" + token, token));

        assertThat(grantLog.grantsOf("first-order")).isEmpty();
        assertThat(grantLog.grantsOf("order-" + GrantLog.ENTITIES)).hasSize(1);
    }

    private void grant(String entity, long token) {
        LockHandle handle = (LockHandle) Proxy.newProxyInstance(LockHandle.class.getClassLoader(),
                new Class<?>[] {LockHandle.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "entity" -> entity;
                    case "fencingToken" -> token;
                    default -> null;
                });
        grantLog.onAcquired(null, handle, Duration.ZERO);
    }
}
