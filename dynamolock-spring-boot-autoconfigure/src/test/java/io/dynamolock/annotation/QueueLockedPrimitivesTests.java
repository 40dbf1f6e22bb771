package io.dynamolock.annotation;

import static io.dynamolock.autoconfigure.DynamoDbLocalProperties.race;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dynamolock.annotation.app.TransferService;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockInfo;
import io.dynamolock.core.LockMode;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.LockWaitTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/** {@code @QueueLocked} with several entities, a shared mode and permits, blocking and on a {@code Mono}. */
class QueueLockedPrimitivesTests extends QueueLockedTestSupport {

    @Autowired
    TransferService transfers;

    @Autowired
    LockTemplate locks;

    @Test
    void transfersBetweenRandomAccountsKeepTheTotal() throws Exception {
        race(8, 15, () -> {
            ThreadLocalRandom random = ThreadLocalRandom.current();
            int from = random.nextInt(6);
            transfers.transfer("a" + from, "a" + (from + 1 + random.nextInt(5)) % 6, random.nextInt(100));
            return null;
        });
        long total = 0;
        for (int i = 0; i < 6; i++) {
            total += transfers.balance("a" + i);
        }
        assertThat(total).isZero();
    }

    @Test
    void anExpressionYieldingACollectionLocksEachElementOnce() {
        assertThat(transfers.all(List.of("col-c", "col-a", "col-c"))).extracting(LockInfo::entity)
                .containsExactlyInAnyOrder("col-a", "col-c");
        assertThat(locks.activeLocks()).isEmpty();
    }

    @Test
    void aSharedMethodRunsBesideAReaderButNotBesideAWriter() {
        try (LockHandle reader = locks.acquire(LockRequest.builder("price-1").mode(LockMode.SHARED).build())) {
            assertThat(transfers.read("price-1")).filteredOn(lock -> lock.entity().equals("price-1"))
                    .extracting(LockInfo::mode).containsExactly(LockMode.SHARED, LockMode.SHARED);
        }
        try (LockHandle writer = locks.acquire("price-1", Duration.ofSeconds(5))) {
            assertThatThrownBy(() -> transfers.read("price-1")).isInstanceOf(LockWaitTimeoutException.class);
        }
    }

    @Test
    void aSemaphoreMethodRunsWhileFewerThanItsPermitsAreHeld() {
        LockRequest permit = LockRequest.builder("partner-api").permits(2).build();
        try (LockHandle first = locks.acquire(permit)) {
            assertThat(transfers.callPartner()).extracting(LockInfo::entity).containsOnly("partner-api").hasSize(2);
            try (LockHandle second = locks.acquire(permit)) {
                assertThatThrownBy(transfers::callPartner).isInstanceOf(LockWaitTimeoutException.class);
            }
        }
    }

    @Test
    void aMonoHoldsEveryEntityWhileItRuns() {
        assertThat(transfers.both("y", "x").block(Duration.ofSeconds(30))).extracting(LockInfo::entity)
                .containsExactlyInAnyOrder("m-x", "m-y");
        assertThat(locks.activeLocks()).isEmpty();
    }
}
