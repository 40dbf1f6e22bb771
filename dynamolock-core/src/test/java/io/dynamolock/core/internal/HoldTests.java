package io.dynamolock.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.test.LockFixture;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The lost-lease callbacks of holds that joined a lock held around them (R10), against DynamoDB Local. */
class HoldTests {

    private final LockFixture fixture = new LockFixture();

    @AfterEach
    void tearDown() throws Exception {
        fixture.close();
    }

    /**
     * Each call of a {@code @QueueLocked} Mono inside a long hold joins it and registers a callback: released, a
     * join takes its callback with it, so a hold through a million such calls keeps no million callbacks.
     */
    @Test
    void aReleasedJoinLeavesNoLostLeaseCallbackOnTheEntryWhileTheOuterHoldGoesOnHearingOfTheLoss() throws Exception {
        LockTemplate locks = fixture.template();
        LockHandle outer = locks.acquire("joined", Duration.ZERO);
        CompletableFuture<LockHandle> outerLost = new CompletableFuture<>();
        outer.onLost(outerLost::complete);
        Acquisition entry = ((Hold) outer).entry();
        int registered = entry.lostCallbacks();

        for (int i = 0; i < 100; i++) {
            locks.inScope(outer, held -> {
                LockHandle join = locks.acquire("joined", Duration.ZERO);
                assertThat(join.fencingToken()).as("joined, not queued").isEqualTo(outer.fencingToken());
                join.onLost(lost -> { });
                join.release();
                join.onLost(lost -> { }); // after its release: no more the join's to hear of
                return null;
            });
        }

        assertThat(entry.lostCallbacks()).as("callbacks left on the entry by 100 released joins")
                .isEqualTo(registered);
        locks.breakLock("joined", null, outer.fencingToken());
        assertThat(outerLost.get(10, TimeUnit.SECONDS)).isSameAs(outer);
    }
}
