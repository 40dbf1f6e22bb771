package io.dynamolock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.dynamolock.core.test.Await;
import io.dynamolock.core.test.FaultInjector;
import io.dynamolock.core.test.FaultInjector.Step;
import io.dynamolock.core.test.LockFixture;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link LockHandle#releaseAsync()}: given up in this JVM at once, its removal sent on the template's threads, so a
 * caller that must not block needs no pool of its own, nor one its other work may fill.
 */
@Timeout(60)
class ReleaseAsyncTests {

    private final LockFixture fixture = new LockFixture();
    private final List<String> events = new CopyOnWriteArrayList<>();

    @AfterEach
    void close() throws Exception {
        fixture.close();
    }

    private LockTemplate listened(FaultInjector faults) {
        return fixture.template(b -> b.listener(new LockListener() {
            @Override
            public void onReleased(LockHandle lock, Duration held) {
                events.add("released " + lock.entity());
            }

            @Override
            public void onLost(LockHandle lock) {
                events.add("lost " + lock.entity());
            }
        }), faults);
    }

    @Test
    void returnsAtOnceAndCompletesOnceTheRemovalIsAnswered() throws Exception {
        FaultInjector faults = new FaultInjector();
        LockHandle lock = listened(faults).acquire("async-release", Duration.ZERO);
        CountDownLatch answer = new CountDownLatch(1);
        faults.onAnswer(Step.REMOVE, request -> FaultInjector.await(answer, 60)); // a slow answer
        CompletableFuture<Void> released;
        try {
            released = assertTimeoutPreemptively(Duration.ofSeconds(10), lock::releaseAsync,
                    "the caller does not wait for the removal's answer");
            assertThat(lock.isValid()).as("given up in this JVM at once").isFalse();
            assertThat(released).as("the answer is held").isNotDone();
            assertThat(events).as("listeners hear of it once it is answered").isEmpty();
        }
        finally {
            answer.countDown();
        }
        released.get(10, TimeUnit.SECONDS);
        assertThat(events).containsExactly("released async-release");
        assertThat(lock.wasLost()).isFalse();
        assertThat(fixture.queue("async-release")).isEmpty();
        assertThat(lock.releaseAsync()).as("a second release: nothing to do").isDone();
        assertThat(events).hasSize(1);
    }

    /** A lock broken before any heartbeat told its holder: the removal finds it gone, and the loss is reported. */
    @Test
    void aLossFoundByTheRemovalIsKnownWhenItCompletes() throws Exception {
        LockHandle lock = listened(new FaultInjector()).acquire("async-broken", Duration.ZERO);
        fixture.template().breakLock("async-broken", null, lock.fencingToken());
        lock.releaseAsync().get(10, TimeUnit.SECONDS);
        assertThat(lock.wasLost()).isTrue();
        Await.until(Duration.ofSeconds(10), "listeners told of the loss (on the callback threads)",
                () -> events.contains("lost async-broken"));
        assertThat(events).containsExactly("lost async-broken");
    }

    @Test
    void releasesEveryPartOfALockOfSeveralEntities() throws Exception {
        LockHandle lock = listened(new FaultInjector())
                .acquire(LockRequest.builder(List.of("async-a", "async-b")).build());
        lock.releaseAsync().get(10, TimeUnit.SECONDS);
        assertThat(lock.isValid()).isFalse();
        assertThat(fixture.queue("async-a")).isEmpty();
        assertThat(fixture.queue("async-b")).isEmpty();
        assertThat(events).containsExactlyInAnyOrder("released async-a", "released async-b");
    }

    /** A joined hold gives up nothing: the lock stays the outer hold's, as with release(). */
    @Test
    void aJoinedHoldReleasedAsyncLeavesTheOuterHoldsLock() throws Exception {
        LockTemplate locks = listened(new FaultInjector());
        locks.execute(LockRequest.of("async-joined"), outer -> {
            LockHandle joined = locks.acquire(LockRequest.of("async-joined"));
            joined.releaseAsync().join();
            assertThat(outer.isValid()).isTrue();
            assertThat(fixture.queue("async-joined")).hasSize(1);
            return null;
        });
        assertThat(fixture.queue("async-joined")).isEmpty();
    }
}
