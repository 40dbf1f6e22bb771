package io.dynamolock.core.reliability;

import software.amazon.awssdk.metrics.MetricPublisher;
import software.amazon.awssdk.metrics.MetricCollection;
import software.amazon.awssdk.core.metrics.CoreMetric;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.Context;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.List;
import io.dynamolock.core.LockOptionException;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.test.Await;
import io.dynamolock.core.test.FaultInjector;
import io.dynamolock.core.test.FaultInjector.Fault;
import io.dynamolock.core.test.FaultInjector.Step;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * A request attempt that DynamoDB applies only after the client gave up on it (a slow partition, a request stuck
 * in the service while the client's attempt time-out fires and the SDK, or the library, goes on with a new one).
 * The attempt is held in the hook until its time-out interrupts it, and the very request it carried is applied
 * later through a plain client: what the network and DynamoDB do with a request that was already on its way.
 */
class LateLandingTests extends FaultyTemplateTestSupport {

    /**
     * Renewal R1 (sent at t1) gets no answer in its time limit; the retry R2 (t2 > t1) lands and confirms the lease
     * until t2 + lease; R1 is applied after it and writes t1 + lease back. Renewals are throttled from then on, which
     * the holder tolerates until t2 + lease. A waiter purges the entry at t1 + lease: two holders, the old one
     * still valid by its own confirmation.
     */
    @Test
    void aRenewalAppliedAfterALaterOneDoesNotShortenTheLeaseTheHolderBelievesIn() throws Exception {
        Duration lease = Duration.ofSeconds(6);
        Duration heartbeat = Duration.ofSeconds(3);
        AtomicReference<SdkRequest> slow = new AtomicReference<>();
        CountDownLatch never = new CountDownLatch(1);
        CountDownLatch laterRenewalLanded = new CountDownLatch(1);
        try (LockTemplate holder = InjectedFaultTests.template(faultyClient, faultyOwner + "-h", lease, heartbeat,
                null)) {
            LockHandle lock = holder.acquire(entity, LONG);
            faults.onAttempt(Step.RENEW, request -> {
                if (slow.compareAndSet(null, request)) {
                    FaultInjector.await(never, 30); // until the renewal's time limit (a third of the lease left)
                }
            });
            faults.onAnswer(Step.RENEW, request -> laterRenewalLanded.countDown());
            assertThat(laterRenewalLanded.await(20, TimeUnit.SECONDS)).isTrue();
            faults.failAlways(Step.RENEW, Fault.THROTTLE_BEFORE);

            applyLate(slow.get()); // R1 reaches DynamoDB now

            LockHandle other = clean.acquire(entity, LONG);
            boolean oldHolderValid = lock.isValid();
            other.release();
            lock.release();
            assertThat(oldHolderValid).as("the old holder still believes it holds while another was granted "
                    + "(tokens %d and %d)", lock.fencingToken(), other.fencingToken()).isFalse();
        }
    }

    /**
     * The first attempt of a fail-closed enqueue is applied only after the SDK's retry landed and the lock was held
     * and released: the entry is back, with a new ticket, and nobody renews it. A fail-closed entry is never purged
     * (it may have held), so without the owner's sweep the lock would stay taken until an operator broke it.
     */
    @Test
    void aFailClosedEnqueueAttemptAppliedAfterItsAcquisitionEndedIsSweptAway() throws Exception {
        lateEnqueueIsSweptAway(1, request -> {
            faulty.acquire(request).release();
            assertThat(faults.attempts(Step.ENQUEUE)).as("granted on the SDK's retry").isEqualTo(2);
        });
    }

    /** The same when every attempt went unanswered: the acquire failed, and the entry was taken out at once. */
    @Test
    void aFailClosedEnqueueAttemptAppliedAfterTheEnqueueFailedIsSweptAway() throws Exception {
        lateEnqueueIsSweptAway(ATTEMPTS, request -> assertThatThrownBy(() -> faulty.acquire(request))
                .isInstanceOf(SdkClientException.class));
    }

    /**
     * The first {@code unanswered} attempts of a fail-closed enqueue time out, {@code acquisition} ends (the entry
     * left the queue), and then DynamoDB applies the first attempt.
     */
    private void lateEnqueueIsSweptAway(int unanswered, Consumer<LockRequest> acquisition) throws Exception {
        AtomicReference<SdkRequest> slow = new AtomicReference<>();
        AtomicInteger attempts = new AtomicInteger();
        faults.onAttempt(Step.ENQUEUE, request -> {
            slow.compareAndSet(null, request);
            if (attempts.incrementAndGet() <= unanswered) {
                throw timedOut(); // no answer in time: DynamoDB applies the first of these later
            }
        });
        AtomicBoolean ended = new AtomicBoolean();
        CountDownLatch appliedLate = new CountDownLatch(1);
        faults.onAttempt(Step.REMOVE, request -> {
            if (ended.get()) {
                FaultInjector.await(appliedLate, 30); // the sweep comes after the late attempt, however slow this is
            }
        });
        acquisition.accept(LockRequest.builder(entity).failClosed(true).wait(LONG).build());
        ended.set(true);
        assertThat(items.read(entity, "default").entries()).isEmpty();

        applyLate(slow.get()); // the first attempt reaches DynamoDB now
        assertThat(items.read(entity, "default").entries()).as("the late attempt added the entry again").hasSize(1);
        appliedLate.countDown();

        // Nobody holds the lock: the sweep, one lease after the entry left, gives it back.
        clean.acquire(entity, LEASE.multipliedBy(3)).release();
        assertThat(items.read(entity, "default").entries()).isEmpty();
    }

    /**
     * The release's removal is retried for longer than a lease (DynamoDB unreachable for a while): the sweeps count
     * from when the entry left, i.e. when the retry landed. They counted from the first failed removal, so the
     * one-lease sweep went out while the entry was still there, and an attempt applied just after the retry landed
     * waited for the one-minute sweep.
     */
    @Test
    void sweepsCountFromWhenARetriedRemovalLanded() throws Exception {
        AtomicReference<SdkRequest> slow = new AtomicReference<>();
        faults.onAttempt(Step.ENQUEUE, request -> {
            if (slow.compareAndSet(null, request)) {
                throw timedOut(); // DynamoDB applies this attempt later
            }
        });
        CountDownLatch reachable = new CountDownLatch(1);
        CountDownLatch sweptBeforeItLeft = new CountDownLatch(1);
        faults.onAttempt(Step.REMOVE, request -> {
            boolean release = ((UpdateItemRequest) request).expressionAttributeNames().containsKey("#lr");
            if (reachable.getCount() > 0) {
                if (!release) {
                    sweptBeforeItLeft.countDown();
                }
                throw timedOut();
            }
        });
        faulty.acquire(LockRequest.builder(entity).failClosed(true).wait(LONG).build()).release(); // retried

        assertThat(sweptBeforeItLeft.await(LEASE.multipliedBy(2).toMillis(), TimeUnit.MILLISECONDS))
                .as("a sweep sent while the release was still being retried").isFalse();
        reachable.countDown();
        Await.until(LONG, "the retried removal landed", () -> items.read(entity, "default").entries().isEmpty());
        applyLate(slow.get());
        assertThat(items.read(entity, "default").entries()).as("the late attempt added the entry").hasSize(1);

        // The sweep, one lease after the entry left, gives the lock back.
        clean.acquire(entity, LEASE.multipliedBy(3)).release();
    }

    /**
     * The enqueue's first attempt gets no answer, the SDK's retry is refused for its permits (another number holds
     * the lock): LockOptionException, and no sweep. Later the lock's permits become ours (the old holder left, a
     * caller of our number took the empty queue over) and DynamoDB applies the first attempt: a fail-closed entry
     * nobody renews or removes, one permit of the semaphore gone for good.
     */
    @Test
    void aFailClosedEnqueueRefusedForItsPermitsAfterAnUnansweredAttemptIsSweptToo() throws Exception {
        LockHandle other = clean.acquire(entity, LONG); // permits 1
        AtomicReference<SdkRequest> slow = new AtomicReference<>();
        faults.onAttempt(Step.ENQUEUE, request -> {
            if (slow.compareAndSet(null, request)) {
                throw timedOut(); // no answer in time: DynamoDB applies it later
            }
        });
        AtomicBoolean ended = new AtomicBoolean();
        CountDownLatch appliedLate = new CountDownLatch(1);
        faults.onAttempt(Step.REMOVE, request -> {
            if (ended.get()) {
                FaultInjector.await(appliedLate, 30); // a sweep comes after the late attempt
            }
        });
        LockRequest two = LockRequest.builder(entity).failClosed(true).permits(2).wait(LONG).build();
        assertThatThrownBy(() -> faulty.acquire(two)).isInstanceOf(LockOptionException.class);
        assertThat(faults.attempts(Step.ENQUEUE)).as("the SDK retried the enqueue").isEqualTo(2);
        ended.set(true);

        other.release();
        clean.acquire(LockRequest.builder(entity).permits(2).wait(LONG).build()).release(); // takes permits 2 over
        assertThat(items.read(entity, "default").entries()).isEmpty();

        applyLate(slow.get());
        assertThat(items.read(entity, "default").entries()).as("the late attempt added the entry").hasSize(1);
        appliedLate.countDown();

        // The semaphore admits two: with nobody holding, two callers must get in (within a few leases).
        LockRequest semaphore = LockRequest.builder(entity).permits(2).wait(LEASE.multipliedBy(3)).build();
        LockHandle first = clean.acquire(semaphore);
        try {
            clean.acquire(semaphore).release();
        }
        finally {
            first.release();
        }
    }

    /**
     * A late attempt that DynamoDB applied before the template closed, within a lease of the entry leaving: the
     * close sweeps it (closing right after a release is what every batch job does).
     */
    @Test
    void closeSweepsALateAttemptThatLandedBeforeIt() throws Exception {
        landLateAfterAReleaseThen(faulty::close);
    }

    /**
     * An enqueue whose first attempt was throttled (refused before it reached DynamoDB: it can never be applied)
     * and whose retry was granted: no request may follow the release, fail-closed though it is. (A fail-open entry
     * is never swept: one added late expires one lease after its attempt was sent, before a sweep could run.)
     */
    @Test
    void aThrottledFailClosedEnqueueCostsNoSweeps() throws Exception {
        faults.fail(Step.ENQUEUE, Fault.THROTTLE_BEFORE, 1);
        faulty.acquire(LockRequest.builder(entity).failClosed(true).wait(LONG).build()).release();
        assertThat(faults.attempts(Step.ENQUEUE)).isEqualTo(2);
        CountDownLatch more = faults.awaitAttempts(Step.REMOVE, 1);
        assertThat(more.await(LEASE.multipliedBy(2).toMillis(), TimeUnit.MILLISECONDS))
                .as("a removal sent after the release of a lock whose enqueue can never land late").isFalse();
    }

    /**
     * An application's client publishes its metrics (CloudWatchMetricPublisher, a Micrometer bridge): every
     * request of the lock must reach it. A request-level publisher replaces the client's in SDK v2.
     */
    @Test
    void theClientsOwnMetricPublisherStillSeesEveryEnqueue() {
        List<String> published = new CopyOnWriteArrayList<>();
        AtomicInteger sent = new AtomicInteger();
        MetricPublisher application = new MetricPublisher() {
            @Override
            public void publish(MetricCollection metrics) {
                published.addAll(metrics.metricValues(CoreMetric.OPERATION_NAME));
            }

            @Override
            public void close() {
            }
        };
        ExecutionInterceptor counter = new ExecutionInterceptor() {
            @Override
            public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
                if (context.request() instanceof UpdateItemRequest) {
                    sent.incrementAndGet();
                }
            }
        };
        try (DynamoDbClient withMetrics = dynamo.clientBuilder().overrideConfiguration(c -> c
                .addMetricPublisher(application).addExecutionInterceptor(counter)).build();
                LockTemplate template = InjectedFaultTests.template(withMetrics, "metrics", LEASE)) {
            template.acquire(entity, LONG).release();
            template.acquire(LockRequest.builder(entity).failClosed(true).wait(LONG).build()).release();
        }
        assertThat(published.stream().filter("UpdateItem"::equals).count())
                .as("UpdateItem calls the application's metric publisher saw").isEqualTo(sent.get());
    }

    /** close() on an interrupted thread (a job stopped by shutdownNow(), closing its template in finally). */
    @Test
    void closeOnAnInterruptedThreadStillSweeps() throws Exception {
        landLateAfterAReleaseThen(() -> {
            Thread.currentThread().interrupt();
            try {
                faulty.close();
            }
            finally {
                Thread.interrupted();
            }
        });
    }

    /** A release answered only after close() (a shutdown while a job releases): its sweep is sent then. */
    @Test
    void aReleaseAnsweredAfterCloseIsStillSwept() throws Exception {
        AtomicReference<SdkRequest> slow = new AtomicReference<>();
        faults.onAttempt(Step.ENQUEUE, request -> {
            if (slow.compareAndSet(null, request)) {
                throw timedOut();
            }
        });
        LockHandle lock = faulty.acquire(LockRequest.builder(entity).failClosed(true).wait(LONG).build());
        CountDownLatch removalApplied = new CountDownLatch(1);
        CountDownLatch answer = new CountDownLatch(1);
        faults.onAnswer(Step.REMOVE, request -> {
            if (removalApplied.getCount() > 0) {
                removalApplied.countDown();
                FaultInjector.await(answer, 30); // a slow answer
            }
        });
        Thread releaser = new Thread(lock::release);
        releaser.start();
        assertThat(removalApplied.await(10, TimeUnit.SECONDS)).isTrue();
        applyLate(slow.get());
        assertThat(items.read(entity, "default").entries()).as("the late attempt added the entry").hasSize(1);

        faulty.close(); // the late attempt landed before this
        answer.countDown();
        releaser.join(10_000);
        faulty.terminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        clean.acquire(entity, LEASE.multipliedBy(3)).release();
    }

    /** close() twice (try-with-resources and a @PreDestroy, say) sends a sweep once. */
    @Test
    void aSecondCloseSendsNoSweepAgain() throws Exception {
        landLateAfterAReleaseThen(faulty::close);
        int sent = faults.attempts(Step.REMOVE);
        faulty.close();
        assertThat(faults.attempts(Step.REMOVE)).as("removals sent by a second close()").isEqualTo(sent);
    }

    /**
     * close() does not wait for DynamoDB once per pending sweep (a network cut at shutdown): it sends them all at
     * once on the template's threads, which stay until they are answered.
     */
    @Test
    void closeSendsPendingSweepsWithoutWaitingForTheirAnswers() throws Exception {
        // A heartbeat of 10 s: each removal may take that long, so sweeps sent one after another would take 40 s.
        try (LockTemplate slowToAnswer = InjectedFaultTests.template(faultyClient, faultyOwner + "-s",
                Duration.ofSeconds(30), Duration.ofSeconds(10), null)) {
            AtomicBoolean unanswered = new AtomicBoolean();
            faults.onAttempt(Step.ENQUEUE, request -> {
                if (unanswered.getAndSet(false)) {
                    throw timedOut();
                }
            });
            for (int i = 0; i < 4; i++) {
                unanswered.set(true);
                slowToAnswer.acquire(LockRequest.builder(entity + "-" + i).failClosed(true).wait(LONG).build())
                        .release();
            }
            CountDownLatch answer = new CountDownLatch(1);
            CountDownLatch allSent = faults.awaitAttempts(Step.REMOVE, 4);
            faults.onAttempt(Step.REMOVE, request -> FaultInjector.await(answer, 30)); // DynamoDB stops answering
            Thread closer = new Thread(slowToAnswer::close);
            closer.start();
            closer.join(5_000);
            boolean closedMeanwhile = !closer.isAlive();
            boolean sentAtOnce = allSent.await(5, TimeUnit.SECONDS);
            answer.countDown();
            closer.join(30_000);
            assertThat(closedMeanwhile).as("close() returned while its sweeps were unanswered").isTrue();
            assertThat(sentAtOnce).as("the four sweeps sent at once").isTrue();
        }
    }

    /** A fail-closed enqueue's first attempt is applied after the release; then {@code closing} runs; then it must go. */
    private void landLateAfterAReleaseThen(Runnable closing) throws Exception {
        AtomicReference<SdkRequest> slow = new AtomicReference<>();
        faults.onAttempt(Step.ENQUEUE, request -> {
            if (slow.compareAndSet(null, request)) {
                throw timedOut();
            }
        });
        faulty.acquire(LockRequest.builder(entity).failClosed(true).wait(LONG).build()).release();
        applyLate(slow.get());
        assertThat(items.read(entity, "default").entries()).as("the late attempt added the entry").hasSize(1);
        closing.run();
        faulty.terminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        clean.acquire(entity, LEASE.multipliedBy(3)).release();
    }

    static SdkClientException timedOut() {
        return SdkClientException.create("Read timed out (DynamoDB is slow to apply this attempt)",
                new SocketTimeoutException("Read timed out"));
    }

    /** The request as DynamoDB gets it now; nobody waits for its answer any more. */
    static void applyLate(SdkRequest request) {
        try {
            client.updateItem((UpdateItemRequest) request);
        }
        catch (ConditionalCheckFailedException refused) {
            // refused by its condition: what a protocol that expects stragglers makes of it
        }
    }
}
