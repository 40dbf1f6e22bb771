package io.dynamolock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockListener;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.test.LockFixture;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Every observation {@link LockObservationListener} starts is stopped, however the core's events interleave. */
@Timeout(60)
class LockObservationListenerTests {

    private final LockFixture fixture = new LockFixture();
    private final ObservationRegistry registry = ObservationRegistry.create();
    private final Recorder recorder = new Recorder();

    @AfterEach
    void tearDown() throws Exception {
        fixture.close();
    }

    @Test
    void theHoldOfALockWhoseReentryLetGoLastIsStopped() {
        registry.observationConfig().observationHandler(recorder);
        LockTemplate locks = fixture.template(b -> b.listener(new LockObservationListener(registry)));
        LockRequest request = LockRequest.of("joined");
        LockHandle outer = locks.acquire(request);
        // As an async @QueueLocked method called inside the outer lock: it joins, and outlives the outer hold.
        LockHandle inner = locks.inScope(outer, held -> locks.acquire(request));
        outer.release();
        inner.release();

        assertThat(fixture.queue("joined")).isEmpty();
        assertThat(recorder.stopped).containsExactlyInAnyOrderElementsOf(recorder.started)
                .contains("dynamolock.lock.hold");
    }

    @Test
    void aHoldLostWhileItsObservationStartsIsStopped() throws Exception {
        CountDownLatch holdStarting = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        registry.observationConfig().observationHandler(recorder).observationHandler(new Recorder() {
            @Override
            public void onStart(Observation.Context context) {
                if ("dynamolock.lock.hold".equals(context.getName())) {
                    holdStarting.countDown();
                    await(proceed);
                }
            }
        });
        CountDownLatch lostReported = new CountDownLatch(1);
        LockTemplate locks = fixture.template(b -> b.listener(new LockObservationListener(registry))
                .listener(new LockListener() { // after the observation listener: it has had onLost too
                    @Override
                    public void onLost(LockHandle lock) {
                        lostReported.countDown();
                    }
                }));

        CompletableFuture<LockHandle> granted = locks.acquireAsync(LockRequest.of("lost-at-grant"));
        assertThat(holdStarting.await(30, TimeUnit.SECONDS)).isTrue();
        locks.breakLock("lost-at-grant", null, fixture.queue("lost-at-grant").get(0).ticket());
        assertThat(lostReported.await(30, TimeUnit.SECONDS)).isTrue();
        proceed.countDown();
        granted.get(30, TimeUnit.SECONDS).release();

        assertThat(recorder.stopped).containsExactlyInAnyOrderElementsOf(recorder.started)
                .contains("dynamolock.lock.hold");
    }

    private static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(30, TimeUnit.SECONDS)).isTrue();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** The names of the observations started and stopped. */
    private static class Recorder implements ObservationHandler<Observation.Context> {

        final List<String> started = new CopyOnWriteArrayList<>();
        final List<String> stopped = new CopyOnWriteArrayList<>();

        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }

        @Override
        public void onStart(Observation.Context context) {
            started.add(context.getName());
        }

        @Override
        public void onStop(Observation.Context context) {
            stopped.add(context.getName());
        }
    }
}
