package io.dynamolock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockListener;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.test.Await;
import io.dynamolock.core.test.LockFixture;
import io.dynamolock.reactive.ReactiveLockTemplate;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;

/**
 * Every observation {@link LockObservationListener} starts is stopped, however the core's events interleave, and is
 * in the trace of the caller that asked for the lock, blocking, async or reactive.
 */
@Timeout(60)
class LockObservationListenerTests {

    /** Where WebFlux keeps a request's observation in the Reactor context: ObservationThreadLocalAccessor.KEY. */
    private static final String CONTEXT_OBSERVATION = "micrometer.observation";

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

    /**
     * An async grant is reported on a dynamolock thread, where no observation is current: the hold still belongs to
     * the trace of the caller that asked for it, as its acquisition does.
     */
    @Test
    void theHoldOfAnAsyncGrantIsInTheCallersTrace() throws Exception {
        registry.observationConfig().observationHandler(recorder);
        lockAsyncInARequest("async-parent");

        assertThat(recorder.parents).containsEntry("dynamolock.lock.acquire", "http.request")
                .containsEntry("dynamolock.lock.hold", "http.request");
    }

    /**
     * An application that turns the acquisition observations off (an ObservationPredicate: too many spans) keeps
     * the holds: an async grant's hold is still a child of the caller's observation, not a parentless root.
     */
    @Test
    void theHoldOfAnAsyncGrantIsInTheCallersTraceWithAcquisitionsTurnedOff() throws Exception {
        registry.observationConfig().observationHandler(recorder)
                .observationPredicate((name, context) -> !"dynamolock.lock.acquire".equals(name));
        lockAsyncInARequest("async-parent-off");

        assertThat(recorder.stopped).contains("dynamolock.lock.hold").doesNotContain("dynamolock.lock.acquire");
        assertThat(recorder.parents).containsEntry("dynamolock.lock.hold", "http.request");
    }

    /**
     * With Boot's default (limited) context propagation, WebFlux keeps the request's observation in the Reactor
     * context only, not in a thread local of the thread that subscribes: a reactive lock is in that trace too.
     */
    @Test
    void aReactiveLockIsInTheTraceOfTheObservationInItsSubscribersContext() {
        registry.observationConfig().observationHandler(recorder);
        Observation request = Observation.start("http.request", registry);
        lockReactively("reactive-parent", request);
        request.stop();

        assertThat(recorder.parents).containsEntry("dynamolock.lock.acquire", "http.request")
                .containsEntry("dynamolock.lock.hold", "http.request");
    }

    /** An observation current on the subscribing thread is the parent, as for a blocking caller. */
    @Test
    void theSubscribingThreadsObservationWinsOverTheContexts() {
        registry.observationConfig().observationHandler(recorder);
        Observation request = Observation.start("http.request", registry);
        Observation inContext = Observation.start("in.context", registry);
        try (Observation.Scope scope = request.openScope()) {
            lockReactively("thread-parent", inContext);
            assertThat(registry.getCurrentObservation()).isSameAs(request);
        }
        inContext.stop();
        request.stop();

        assertThat(recorder.parents).containsEntry("dynamolock.lock.acquire", "http.request")
                .containsEntry("dynamolock.lock.hold", "http.request");
    }

    /** A caller that gives up (a client gone, a Mono's time-out) is no failed request: no error on the span. */
    @Test
    void aCancelledAcquisitionEndsCancelledWithoutAnError() throws Exception {
        registry.observationConfig().observationHandler(recorder);
        LockTemplate locks = fixture.template(b -> b.listener(new LockObservationListener(registry)));
        LockHandle held = locks.acquire(LockRequest.of("cancelled"));
        CompletableFuture<LockHandle> waiter = locks.acquireAsync(LockRequest.of("cancelled"));
        fixture.awaitQueueLength("cancelled", 2);
        waiter.cancel(true);
        Await.until(Duration.ofSeconds(30), "both acquisitions reported",
                () -> recorder.stopped.stream().filter("dynamolock.lock.acquire"::equals).count() == 2);
        assertThat(recorder.outcomes).containsExactly("acquired", "cancelled");
        assertThat(recorder.errors).isEmpty();
        held.release();
    }

    /** Within an observation "http.request", takes and releases {@code entity}'s lock with acquireAsync. */
    private void lockAsyncInARequest(String entity) throws Exception {
        LockTemplate locks = fixture.template(b -> b.listener(new LockObservationListener(registry)));
        Observation request = Observation.start("http.request", registry);
        LockHandle lock;
        try (Observation.Scope scope = request.openScope()) {
            lock = locks.acquireAsync(LockRequest.of(entity)).get(30, TimeUnit.SECONDS);
        }
        lock.release();
        request.stop();
    }

    /** Takes and releases {@code entity}'s lock with a ReactiveLockTemplate, {@code observation} in its context. */
    private void lockReactively(String entity, Observation observation) {
        ReactiveLockTemplate locks = new ReactiveLockTemplate(
                fixture.template(b -> b.listener(new LockObservationListener(registry))));
        String result = locks.execute(LockRequest.of(entity), lock -> Mono.just("done"))
                .contextWrite(context -> context.put(CONTEXT_OBSERVATION, observation))
                .block(Duration.ofSeconds(30));
        assertThat(result).isEqualTo("done");
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
        final List<String> outcomes = new CopyOnWriteArrayList<>();
        final List<Throwable> errors = new CopyOnWriteArrayList<>();
        /** Each observation's name and its parent's. */
        final Map<String, String> parents = new ConcurrentHashMap<>();

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
            KeyValue outcome = context.getLowCardinalityKeyValue("outcome");
            if (outcome != null) {
                outcomes.add(outcome.getValue());
            }
            if (context.getError() != null) {
                errors.add(context.getError());
            }
            if (context.getParentObservation() != null) {
                parents.put(context.getName(), context.getParentObservation().getContextView().getName());
            }
        }
    }
}
