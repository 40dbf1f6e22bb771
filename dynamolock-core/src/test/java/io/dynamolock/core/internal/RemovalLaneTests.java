package io.dynamolock.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockMode;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.test.Await;
import io.dynamolock.core.test.FaultInjector;
import io.dynamolock.core.test.FaultInjector.Fault;
import io.dynamolock.core.test.FaultInjector.Step;
import io.dynamolock.core.test.LockFixture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

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

    /**
     * A template whose leases outlast a cold, loaded start of DynamoDB Local under dozens of enqueues (2 s ones were
     * lost to renewals timed out at 0.5 s, and the queue never reached its length), with a production-like heartbeat:
     * a removal may take up to one (5 s) before it is retried in the background.
     */
    private LockTemplate longLeases(ExecutionInterceptor... interceptors) {
        return fixture.template(b -> b.leaseDuration(Duration.ofSeconds(30)).heartbeatInterval(Duration.ofSeconds(5)),
                interceptors);
    }

    @Test
    void slowRemovalsOfLeavingWaitersTakeNoMoreThanTheirLaneOfRequestThreads() throws Exception {
        String entity = "lane-" + System.nanoTime();
        int waiters = 3 * RemovalLane.PER_LOCK;
        FaultInjector faults = new FaultInjector();
        LockTemplate template = longLeases(faults);
        LockHandle held = longLeases().acquire(entity, Duration.ZERO);
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
            Await.until(Duration.ofSeconds(20), "removals held", () -> unanswered.get() >= RemovalLane.PER_LOCK);
            // The lane is full: what is left waits in order, taking no thread (renewals still find one).
            assertThat(fixture.queue(entity)).as("removals applied, answers held, the rest queued")
                    .hasSizeGreaterThan(1);
            assertThat(mostAtOnce.get()).as("removals holding a request thread at once").isEqualTo(
                    RemovalLane.PER_LOCK);
        }
        finally {
            answers.countDown();
        }
        Await.until(Duration.ofSeconds(30), "every leaving waiter's entry removed",
                () -> fixture.queue(entity).size() == 1);
        assertThat(mostAtOnce.get()).as("never more than the lane at once").isEqualTo(RemovalLane.PER_LOCK);
        held.release();
    }

    /**
     * The lane was one queue per template: the removals of a hot lock that DynamoDB is slow to answer filled it, and
     * the removal of a waiter of another, healthy lock waited behind them, its entry keeping that lock's next waiter
     * out for seconds (a fail-closed one for ever). Each lock has a lane of its own within the template's cap.
     */
    @Test
    void slowRemovalsOfOneLockDoNotHoldUpTheRemovalOfAnotherLocksWaiter() throws Exception {
        String hot = "hot-" + System.nanoTime();
        String cold = "cold-" + System.nanoTime();
        FaultInjector faults = new FaultInjector();
        LockTemplate template = longLeases(faults);
        LockTemplate other = fixture.template();
        LockHandle hotHolder = other.acquire(hot, Duration.ZERO);
        List<CompletableFuture<LockHandle>> hotWaiters = new ArrayList<>();
        for (int i = 0; i < 2 * RemovalLane.PER_LOCK; i++) {
            hotWaiters.add(template.acquireAsync(LockRequest.builder(hot).wait(Duration.ofMinutes(1)).build()));
        }
        fixture.awaitQueueLength(hot, 2 * RemovalLane.PER_LOCK + 1);
        CountDownLatch answers = new CountDownLatch(1);
        AtomicInteger hotUnanswered = new AtomicInteger();
        faults.onAnswer(Step.REMOVE, request -> {
            if (((UpdateItemRequest) request).key().get("pk").s().equals(hot)) {
                hotUnanswered.incrementAndGet();
                FaultInjector.await(answers, 60); // the hot item's removals are slow
            }
        });
        try {
            hotWaiters.forEach(waiter -> waiter.cancel(false));
            Await.until(Duration.ofSeconds(20), "the hot lock's lane full of unanswered removals",
                    () -> hotUnanswered.get() >= RemovalLane.PER_LOCK);
            // A healthy lock: a holder elsewhere, a waiter of ours that leaves, a waiter elsewhere behind it.
            LockHandle coldHolder = other.acquire(cold, Duration.ZERO);
            CompletableFuture<LockHandle> leaving = template.acquireAsync(LockRequest.builder(cold)
                    .wait(Duration.ofMinutes(1)).build());
            fixture.awaitQueueLength(cold, 2);
            CompletableFuture<LockHandle> next = other.acquireAsync(LockRequest.builder(cold)
                    .wait(Duration.ofMinutes(1)).build());
            fixture.awaitQueueLength(cold, 3);
            leaving.cancel(false);
            coldHolder.release();
            long start = System.nanoTime();
            LockHandle granted = next.get(40, TimeUnit.SECONDS);
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .as("the next waiter of a free lock whose only other waiter left; the hot lock's removals held")
                    .isLessThan(Duration.ofSeconds(3));
            assertThat(hotUnanswered.get()).as("the hot lock's removals still unanswered meanwhile")
                    .isEqualTo(RemovalLane.PER_LOCK);
            granted.release();
        }
        finally {
            answers.countDown();
            hotHolder.release();
        }
    }

    /**
     * The future of a release sent in the lane completed inside the removal's slot, so the code chained
     * to it (a reactive subscriber's pipeline, a resumed coroutine) held the slot: 16 slow callers of one lock kept
     * every other removal of it unsent. The lane frees the slot before the future completes.
     */
    @Test
    void codeChainedToReleasesDoesNotHoldTheLocksRemovalLane() throws Exception {
        String entity = "chained-" + System.nanoTime();
        FaultInjector faults = new FaultInjector();
        LockTemplate template = longLeases(faults);
        LockRequest shared = LockRequest.builder(entity).mode(LockMode.SHARED).build();
        List<LockHandle> holds = new ArrayList<>();
        for (int i = 0; i <= RemovalLane.PER_LOCK; i++) {
            holds.add(template.acquire(shared));
        }
        // The removals' answers are held until every caller has chained its code: it then runs where they complete.
        CountDownLatch answers = new CountDownLatch(1);
        AtomicInteger unanswered = new AtomicInteger();
        faults.onAnswer(Step.REMOVE, request -> {
            unanswered.incrementAndGet();
            FaultInjector.await(answers, 60);
        });
        CountDownLatch callersGoOn = new CountDownLatch(1);
        AtomicInteger inCallersCode = new AtomicInteger();
        try {
            for (LockHandle hold : holds.subList(0, RemovalLane.PER_LOCK)) {
                hold.releaseAsync().thenRun(() -> {
                    inCallersCode.incrementAndGet();
                    FaultInjector.await(callersGoOn, 60); // e.g. a blocking call after the release
                });
            }
            Await.until(Duration.ofSeconds(20), "the lane full of unanswered removals",
                    () -> unanswered.get() == RemovalLane.PER_LOCK);
            answers.countDown();
            Await.until(Duration.ofSeconds(20), "every caller in its code after the release",
                    () -> inCallersCode.get() == RemovalLane.PER_LOCK);

            CompletableFuture<Void> last = holds.get(RemovalLane.PER_LOCK).releaseAsync();
            last.get(10, TimeUnit.SECONDS);
            assertThat(fixture.queue(entity)).as("every removal landed, the last one's too").isEmpty();
        }
        finally {
            answers.countDown();
            callersGoOn.countDown();
        }
    }

    /**
     * A removal that failed was retried by the lease keeper straight on a request thread, outside the lane: in a
     * latency spike where every attempt times out, the retries of all leaving waiters held threads at once, doubling
     * their pauses up to a heartbeat until the leases ended (a fail-closed entry's: for ever). Retries wait in the
     * lane as first attempts do.
     */
    @Test
    void retriedRemovalsOfLeavingWaitersTakeNoMoreThanTheirLane() throws Exception {
        String entity = "retry-lane-" + System.nanoTime();
        int waiters = 3 * RemovalLane.PER_LOCK;
        FaultInjector faults = new FaultInjector();
        LockTemplate template = longLeases(faults);
        LockHandle held = fixture.template().acquire(entity, Duration.ZERO);
        List<CompletableFuture<LockHandle>> waiting = new ArrayList<>();
        for (int i = 0; i < waiters; i++) {
            waiting.add(template.acquireAsync(LockRequest.builder(entity).wait(Duration.ofMinutes(1)).build()));
        }
        fixture.awaitQueueLength(entity, waiters + 1);
        LatencySpike spike = new LatencySpike(faults);

        waiting.forEach(waiter -> waiter.cancel(false));

        spike.awaitRemovals(2 * waiters); // every waiter's removal sent, and failed, twice on average
        assertThat(spike.mostAtOnce()).as("removal attempts holding a request thread at once, retries included")
                .isPositive().isLessThanOrEqualTo(RemovalLane.PER_LOCK);
        spike.end();
        Await.until(Duration.ofSeconds(30), "every leaving waiter's entry removed once the spike is over",
                () -> fixture.queue(entity).size() == 1);
        held.release();
    }

    /**
     * A blocking release sends its removal on the caller's thread; one that fails is retried in the background, on
     * request threads, the same path as a leaving waiter's: in the lane too, however many callers release at once.
     */
    @Test
    void retriedRemovalsOfBlockingReleasesTakeNoMoreThanTheirLane() throws Exception {
        String entity = "release-retry-lane-" + System.nanoTime();
        int readers = 3 * RemovalLane.PER_LOCK;
        FaultInjector faults = new FaultInjector();
        LockTemplate template = longLeases(faults);
        List<LockHandle> held = new ArrayList<>();
        for (int i = 0; i < readers; i++) {
            held.add(template.acquire(LockRequest.builder(entity).mode(LockMode.SHARED).wait(Duration.ZERO).build()));
        }
        LatencySpike spike = new LatencySpike(faults);
        ExecutorService callers = Executors.newFixedThreadPool(readers);
        try {
            held.forEach(reader -> callers.execute(reader::release));

            spike.awaitRemovals(readers); // counted on request threads only: the retries
            assertThat(spike.mostAtOnce()).as("retried removals holding a request thread at once")
                    .isPositive().isLessThanOrEqualTo(RemovalLane.PER_LOCK);
        }
        finally {
            callers.shutdown();
        }
        spike.end();
        Await.until(Duration.ofSeconds(30), "every released entry removed once the spike is over",
                () -> fixture.queue(entity).isEmpty());
    }

    /**
     * A latency spike: each removal attempt holds its thread 300 ms, then fails (a 500). Counts the removals sent on
     * the template's request threads (each its SDK attempts, one request), and the most attempts in flight at once.
     */
    private static final class LatencySpike {

        private final FaultInjector faults;
        private final Set<SdkRequest> removals = Collections.synchronizedSet(
                Collections.newSetFromMap(new IdentityHashMap<>()));
        private final AtomicInteger inFlight = new AtomicInteger();
        private final AtomicInteger mostAtOnce = new AtomicInteger();

        LatencySpike(FaultInjector faults) {
            this.faults = faults;
            faults.onAttempt(Step.REMOVE, request -> {
                boolean background = Thread.currentThread().getName().startsWith("dynamolock-request-");
                if (background) {
                    removals.add(request);
                    mostAtOnce.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                }
                try {
                    FaultInjector.delay(Duration.ofMillis(300));
                }
                finally {
                    if (background) {
                        inFlight.decrementAndGet();
                    }
                }
            });
            faults.failAlways(Step.REMOVE, Fault.SERVER_ERROR_BEFORE);
        }

        void awaitRemovals(int count) {
            Await.until(Duration.ofSeconds(60), count + " removals sent on request threads",
                    () -> removals.size() >= count);
        }

        int mostAtOnce() {
            return mostAtOnce.get();
        }

        /** DynamoDB answers at once again, and applies the removals. */
        void end() {
            faults.clear();
        }
    }

    /**
     * The lanes of several slow locks together stay within the template's cap, which leaves the other request threads
     * to renewals (R12); each lock within its own lane.
     */
    @Test
    void theRemovalsOfSeveralSlowLocksTakeNoMoreThanTheTemplatesCapOfRequestThreads() throws Exception {
        Workers workers = new Workers();
        RemovalLane lane = new RemovalLane(workers);
        int locks = RemovalLane.TOTAL / RemovalLane.PER_LOCK + 2;
        int each = RemovalLane.PER_LOCK + 4;
        CountDownLatch answers = new CountDownLatch(1);
        AtomicInteger running = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        Map<LockKey, AtomicInteger> runningOf = new ConcurrentHashMap<>();
        Map<LockKey, AtomicInteger> mostOf = new ConcurrentHashMap<>();
        AtomicInteger sent = new AtomicInteger();
        try {
            for (int i = 0; i < each; i++) {
                for (int l = 0; l < locks; l++) {
                    LockKey key = new LockKey("slow-" + l, "default");
                    lane.send(key, () -> {
                        mostAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max);
                        int ofLock = runningOf.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
                        mostOf.computeIfAbsent(key, k -> new AtomicInteger()).accumulateAndGet(ofLock, Math::max);
                        FaultInjector.await(answers, 60); // a removal whose answer is slow
                        runningOf.get(key).decrementAndGet();
                        running.decrementAndGet();
                        sent.incrementAndGet();
                    });
                }
            }
            Await.until(Duration.ofSeconds(20), "the template's cap of removals running",
                    () -> running.get() == RemovalLane.TOTAL);
            assertThat(mostOf.values()).as("every lock's turn: each slow lock has removals running")
                    .hasSize(locks).allMatch(most -> most.get() > 0);
        }
        finally {
            answers.countDown();
        }
        Await.until(Duration.ofSeconds(20), "every removal sent", () -> sent.get() == locks * each);
        assertThat(mostAtOnce.get()).as("removals of the template at once").isEqualTo(RemovalLane.TOTAL);
        assertThat(mostOf.values()).as("removals of one lock at once")
                .allMatch(most -> most.get() <= RemovalLane.PER_LOCK);
        workers.shutdown();
    }
}
