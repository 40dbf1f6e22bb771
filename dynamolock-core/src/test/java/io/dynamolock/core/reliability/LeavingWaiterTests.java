package io.dynamolock.core.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockInterruptedException;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.LockWaitTimeoutException;
import io.dynamolock.core.test.Await;
import io.dynamolock.core.test.FaultInjector;
import io.dynamolock.core.test.FaultInjector.Step;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * A waiter that leaves the queue (timed out, interrupted, cancelled) sends its removal in the background: the
 * removal's answer, however slow (a DynamoDB latency spike, the very moment callers time out and cancel), keeps the
 * caller half a second past its wait at most (an interrupt: past the interrupt), and holds up no other acquisition of
 * the template. Removals are applied at once
 * but their answers are held on a latch; each test checks that the outcome came while no held answer had ended,
 * then lets them go and checks that the entries did leave.
 */
class LeavingWaiterTests extends FaultyTemplateTestSupport {

    /** Waiters cancelled at once: more than a template has step threads (16). */
    static final int WAITERS = 20;

    final CountDownLatch removalsHeld = new CountDownLatch(1);
    final AtomicInteger removalsEnded = new AtomicInteger();
    DynamoDbClient patientClient;
    LockTemplate waiters;

    /**
     * Waiters of a client that gives each attempt 10 s (its call timeout), with a heartbeat interval longer than
     * that, so that a held removal ends only when the test lets it go (or after 10 s).
     */
    @BeforeEach
    void patientTemplate() {
        patientClient = faults.clientFor(dynamo, ATTEMPTS, Duration.ofSeconds(10));
        waiters = LockTemplate.builder(patientClient).tableName(table).ownerName(faultyOwner)
                .leaseDuration(Duration.ofSeconds(60)).heartbeatInterval(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(50), Duration.ofSeconds(1)).build();
    }

    @AfterEach
    void closePatientTemplate() {
        removalsHeld.countDown();
        faults.clear();
        waiters.close();
        patientClient.close();
    }

    /** From now on, removals are applied but not answered until {@link #removalsHeld} is released. */
    void holdRemovals() {
        holdAnswers(Step.REMOVE, removalsHeld, removalsEnded);
    }

    /**
     * From now on, requests of {@code step} are applied but not answered until {@code held} is released;
     * {@code ended} counts the held answers that have ended (answered, or aborted by the client).
     */
    CountDownLatch holdAnswers(Step step, CountDownLatch held, AtomicInteger ended) {
        CountDownLatch holding = new CountDownLatch(1);
        faults.onAnswer(step, request -> {
            holding.countDown();
            try {
                FaultInjector.await(held, 30);
            }
            finally {
                ended.incrementAndGet();
            }
        });
        return holding;
    }

    /** A blocking acquire of {@code entity} on a thread of its own; the future has what it threw, if anything. */
    Thread acquireOnItsOwnThread(CompletableFuture<Throwable> failed) {
        Thread waiting = new Thread(() -> {
            try {
                waiters.acquire(entity, LONG).release();
                failed.complete(null);
            }
            catch (Throwable ex) {
                failed.complete(ex);
            }
        });
        waiting.start();
        Await.until(Duration.ofSeconds(30), "the waiter is in the queue",
                () -> items.read(entity, "default").of(faultyOwner).size() == 1);
        return waiting;
    }

    void awaitWaitersGone() {
        Await.until(Duration.ofSeconds(30), "the waiters' entries left the queue",
                () -> items.read(entity, "default").of(faultyOwner).isEmpty());
    }

    @Test
    void aTimeOutIsReportedWhileTheRemovalOfItsEntryIsUnanswered() {
        LockHandle holder = clean.acquire(entity, LONG);
        try {
            holdRemovals();
            assertThatThrownBy(() -> waiters.acquire(entity, Duration.ofMillis(300)))
                    .isInstanceOf(LockWaitTimeoutException.class);
            assertThat(removalsEnded).as("held removals that had ended when the time-out was reported").hasValue(0);
            removalsHeld.countDown();
            awaitWaitersGone();
        }
        finally {
            holder.release();
        }
    }

    @Test
    void anInterruptIsReportedWhileTheRemovalOfItsEntryIsUnanswered() throws Exception {
        LockHandle holder = clean.acquire(entity, LONG);
        try {
            holdRemovals();
            CompletableFuture<Throwable> failed = new CompletableFuture<>();
            Thread waiting = acquireOnItsOwnThread(failed);
            waiting.interrupt();
            assertThat(failed.get(30, TimeUnit.SECONDS)).isInstanceOf(LockInterruptedException.class);
            assertThat(removalsEnded).as("held removals that had ended when the interrupt was reported").hasValue(0);
            removalsHeld.countDown();
            awaitWaitersGone();
        }
        finally {
            holder.release();
        }
    }

    @Test
    void anInterruptIsReportedWhileAPollIsUnanswered() throws Exception {
        LockHandle holder = clean.acquire(entity, LONG);
        CountDownLatch readsHeld = new CountDownLatch(1);
        AtomicInteger readsEnded = new AtomicInteger();
        try {
            CompletableFuture<Throwable> failed = new CompletableFuture<>();
            Thread waiting = acquireOnItsOwnThread(failed);
            CountDownLatch pollHeld = holdAnswers(Step.READ, readsHeld, readsEnded);
            assertThat(pollHeld.await(30, TimeUnit.SECONDS)).as("a poll's answer is held").isTrue();
            waiting.interrupt();
            assertThat(failed.get(30, TimeUnit.SECONDS)).isInstanceOf(LockInterruptedException.class);
            assertThat(readsEnded).as("held polls that had ended when the interrupt was reported").hasValue(0);
            readsHeld.countDown();
            awaitWaitersGone();
        }
        finally {
            readsHeld.countDown();
            holder.release();
        }
    }

    @Test
    void removalsOfCancelledWaitersDoNotHoldUpAFreeLock() throws Exception {
        LockHandle holder = clean.acquire(entity, LONG);
        try {
            List<CompletableFuture<LockHandle>> waiting = IntStream.range(0, WAITERS)
                    .mapToObj(i -> waiters.acquireAsync(LockRequest.builder(entity).wait(LONG).build())).toList();
            Await.until(Duration.ofSeconds(30), "every waiter is in the queue",
                    () -> items.read(entity, "default").of(faultyOwner).size() == WAITERS);
            holdRemovals();
            CountDownLatch removing = faults.awaitAttempts(Step.REMOVE, 16);
            waiting.forEach(future -> future.cancel(false));
            assertThat(removing.await(30, TimeUnit.SECONDS)).as("removals sent").isTrue();

            LockHandle free = waiters.acquireAsync(LockRequest.of(entity + "-free")).get(30, TimeUnit.SECONDS);
            assertThat(removalsEnded).as("held removals that had ended when a free lock was granted").hasValue(0);
            removalsHeld.countDown();
            free.release();
            awaitWaitersGone();
        }
        finally {
            holder.release();
        }
    }
}
