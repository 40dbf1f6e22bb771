package io.dynamolock.autoconfigure;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockListener;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Reports lock acquisitions and holds as Micrometer {@link Observation}s, so that a trace shows how long a
 * request waited for which lock and how long it held it.
 * <ul>
 * <li>{@code dynamolock.acquire}: from the first request to the outcome, a child of the caller's current
 * observation. Low-cardinality {@code namespace}, {@code mode} and {@code outcome}
 * ({@code acquired}, {@code timeout}, {@code lost}, {@code interrupted}, {@code queue_full}, {@code error},
 * the failure also recorded as the observation's error); the entity as the high-cardinality {@code entity}.</li>
 * <li>{@code dynamolock.hold}: from the grant to the release ({@code outcome=released}) or the loss of the lease
 * ({@code outcome=lost}), with the fencing token as a high-cardinality value.</li>
 * </ul>
 * The core reports no identity with an acquisition's events, so they are paired here: a blocking acquisition
 * reports its start and outcome on the calling thread, which ties them together; an {@code acquireAsync} reports
 * its outcome on a dynamolock thread, and is paired with the oldest pending acquisition of the same lock (grants
 * come in queue order, so that is the right one but when waits of different lengths time out out of order).
 */
public class LockObservationListener implements LockListener {

    static final String MODE = "exclusive";

    private final ObservationRegistry registry;
    private final ThreadLocal<Observation> acquiring = new ThreadLocal<>();
    /** Started, not yet stopped acquisitions per lock, oldest first; changed only inside the map's atomic updates. */
    private final Map<List<String>, Deque<Observation>> pending = new ConcurrentHashMap<>();
    private final Map<LockHandle, Observation> holding = new ConcurrentHashMap<>();

    public LockObservationListener(ObservationRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void onAcquiring(String entity, String namespace) {
        Observation observation = Observation.createNotStarted("dynamolock.acquire", registry)
                .contextualName("lock " + namespace)
                .lowCardinalityKeyValue("namespace", namespace)
                .lowCardinalityKeyValue("mode", MODE)
                .highCardinalityKeyValue("entity", entity)
                .start();
        pending.compute(List.of(entity, namespace), (lock, started) -> {
            Deque<Observation> queue = started != null ? started : new ArrayDeque<>();
            queue.addLast(observation);
            return queue;
        });
        acquiring.set(observation);
    }

    @Override
    public void onAcquired(LockHandle lock, Duration waited) {
        stopAcquiring(lock.entity(), lock.namespace(), LockOutcomes.ACQUIRED, null);
        holding.put(lock, Observation.createNotStarted("dynamolock.hold", registry)
                .contextualName("hold " + lock.namespace())
                .lowCardinalityKeyValue("namespace", lock.namespace())
                .lowCardinalityKeyValue("mode", MODE)
                .highCardinalityKeyValue("entity", lock.entity())
                .highCardinalityKeyValue("fencing.token", Long.toString(lock.fencingToken()))
                .start());
    }

    @Override
    public void onNotAcquired(String entity, String namespace, Duration waited) {
        stopAcquiring(entity, namespace, LockOutcomes.TIMEOUT, null);
    }

    @Override
    public void onFailed(String entity, String namespace, Duration waited, RuntimeException failure) {
        stopAcquiring(entity, namespace, LockOutcomes.of(failure), failure);
    }

    @Override
    public void onReleased(LockHandle lock, Duration held) {
        stopHolding(lock, "released");
    }

    @Override
    public void onLost(LockHandle lock) {
        stopHolding(lock, "lost");
    }

    private void stopAcquiring(String entity, String namespace, String outcome, RuntimeException failure) {
        Observation observation = take(List.of(entity, namespace), acquiring.get());
        if (observation != null) {
            if (failure != null) {
                observation.error(failure);
            }
            observation.lowCardinalityKeyValue("outcome", outcome).stop();
        }
    }

    /**
     * The acquisition an outcome belongs to: this thread's own if it is still pending for that lock (a blocking
     * acquisition), else the oldest pending one of the lock (an asynchronous acquisition).
     */
    private Observation take(List<String> lock, Observation ownOfThisThread) {
        Observation[] taken = new Observation[1];
        pending.computeIfPresent(lock, (key, started) -> {
            taken[0] = ownOfThisThread != null && started.remove(ownOfThisThread) ? ownOfThisThread : started.pollFirst();
            return started.isEmpty() ? null : started;
        });
        if (taken[0] == ownOfThisThread) {
            acquiring.remove();
        }
        return taken[0];
    }

    private void stopHolding(LockHandle lock, String outcome) {
        Observation observation = holding.remove(lock);
        if (observation != null) {
            observation.lowCardinalityKeyValue("outcome", outcome).stop();
        }
    }
}
