package io.dynamolock.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.test.Await;
import io.dynamolock.core.test.FaultInjector;
import io.dynamolock.core.test.FaultInjector.Step;
import io.dynamolock.core.test.LockFixture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The removals of leaving waiters go on request threads, the pool that renews every lease of the template (R12).
 * A burst of them that DynamoDB is slow to answer took as many threads as there were removals, so that past the
 * pool's 500 threads healthy holders could no longer renew. They take at most a lane of their own, the rest queued.
 */
@Timeout(120)
class RemovalLaneTests {

    private final LockFixture fixture = new LockFixture();

    @AfterEach
    void close() throws Exception {
        fixture.close();
    }

    @Test
    void slowRemovalsOfLeavingWaitersTakeNoMoreThanTheirLaneOfRequestThreads() throws Exception {
        String entity = "lane-" + System.nanoTime();
        int waiters = 3 * LockEngine.REMOVAL_LANE;
        FaultInjector faults = new FaultInjector();
        LockTemplate template = fixture.template(b -> { }, faults);
        LockHandle held = fixture.template().acquire(entity, Duration.ZERO);
        List<CompletableFuture<LockHandle>> waiting = new ArrayList<>();
        for (int i = 0; i < waiters; i++) {
            waiting.add(template.acquireAsync(LockRequest.builder(entity).wait(Duration.ofMinutes(1)).build()));
        }
        fixture.awaitQueueLength(entity, waiters + 1);
        // DynamoDB applies the removals but holds their answers (a latency spike): each keeps its thread.
        CountDownLatch answers = new CountDownLatch(1);
        AtomicInteger unanswered = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        faults.onAnswer(Step.REMOVE, request -> {
            mostAtOnce.accumulateAndGet(unanswered.incrementAndGet(), Math::max);
            FaultInjector.await(answers, 60);
            unanswered.decrementAndGet();
        });
        try {
            waiting.forEach(waiter -> waiter.cancel(false));
            Await.until(Duration.ofSeconds(20), "removals held", () -> unanswered.get() >= LockEngine.REMOVAL_LANE);
            // The lane is full: what is left waits in order, taking no thread (renewals still find one).
            assertThat(fixture.queue(entity)).as("removals applied, answers held, the rest queued")
                    .hasSizeGreaterThan(1);
            assertThat(mostAtOnce.get()).as("removals holding a request thread at once").isEqualTo(
                    LockEngine.REMOVAL_LANE);
        }
        finally {
            answers.countDown();
        }
        Await.until(Duration.ofSeconds(30), "every leaving waiter's entry removed",
                () -> fixture.queue(entity).size() == 1);
        assertThat(mostAtOnce.get()).as("never more than the lane at once").isEqualTo(LockEngine.REMOVAL_LANE);
        held.release();
    }
}
