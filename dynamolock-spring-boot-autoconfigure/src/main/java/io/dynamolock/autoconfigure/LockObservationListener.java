package io.dynamolock.autoconfigure;

import io.dynamolock.core.LockAttempt;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockListener;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Reports lock acquisitions and holds as Micrometer {@link Observation}s, so that a trace shows how long a
 * request waited for which lock and how long it held it.
 * <ul>
 * <li>{@code dynamolock.lock.acquire}: from the first request to the outcome, a child of the caller's current
 * observation (for a {@code ReactiveLockTemplate} call, the one in its subscriber's Reactor context if its thread
 * has none).
 * Low-cardinality {@code namespace}, {@code mode} and {@code outcome}
 * ({@code acquired}, {@code timeout}, {@code lost}, {@code interrupted}, {@code queue_full}, {@code error},
 * the failure also recorded as the observation's error, or {@code cancelled}: the caller gave up, no error); the
 * entity as the high-cardinality {@code entity}.</li>
 * <li>{@code dynamolock.lock.hold}: from the grant to the release ({@code outcome=released}) or the loss of the lease
 * ({@code outcome=lost}), with the fencing token as a high-cardinality value; a child of the same observation as the
 * acquisition, also when an async grant is reported on a dynamolock thread.</li>
 * </ul>
 * {@code mode} is {@code exclusive} or {@code shared}. No meter of {@link LockMetricsListener} has these names, on
 * purpose: Boot's metrics turn each observation into a timer of the same name (and a {@code <name>.active} long task
 * timer), which under a meter's name would count each acquisition twice there, with other tag keys than the meter's
 * (a clash Prometheus refuses). An acquisition's start and outcome are paired by the
 * {@link LockAttempt} both carry, not by thread: an {@code acquireAsync} starts on the caller's thread and ends
 * on a dynamolock thread.
 */
public class LockObservationListener implements LockListener {

    private final ObservationRegistry registry;
    private final Map<LockAttempt, Acquiring> acquiring = new ConcurrentHashMap<>();
    private final Map<LockHandle, Observation> holding = new ConcurrentHashMap<>();

    public LockObservationListener(ObservationRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void onAcquiring(LockAttempt attempt) {
        acquiring.put(attempt, new Acquiring(Observation.createNotStarted("dynamolock.lock.acquire", registry)
                .contextualName("lock " + attempt.namespace())
                .lowCardinalityKeyValue("namespace", attempt.namespace())
                .lowCardinalityKeyValue("mode", LockMetricsListener.tag(attempt.mode()))
                .highCardinalityKeyValue("entity", attempt.entity())
                .start(), registry.getCurrentObservation()));
    }

    @Override
    public void onAcquired(LockAttempt attempt, LockHandle lock, Duration waited) {
        // An async grant is reported on a dynamolock thread: the parent is the caller's observation, as it was when
        // the acquisition started (not the acquisition's own parent: a predicate may have turned that one off).
        Acquiring acquisition = stopAcquiring(attempt, LockOutcomes.ACQUIRED, null);
        holding.put(lock, Observation.createNotStarted("dynamolock.lock.hold", registry)
                .parentObservation(acquisition != null && acquisition.caller() != null ? acquisition.caller()
                        : registry.getCurrentObservation())
                .contextualName("hold " + lock.namespace())
                .lowCardinalityKeyValue("namespace", lock.namespace())
                .lowCardinalityKeyValue("mode", LockMetricsListener.tag(lock.mode()))
                .highCardinalityKeyValue("entity", lock.entity())
                .highCardinalityKeyValue("fencing.token", Long.toString(lock.fencingToken()))
                .start());
        if (!lock.isValid()) {
            // Lost while the observation started: onLost may have run before the put and found nothing to stop.
            stopHolding(lock, "lost");
        }
    }

    @Override
    public void onNotAcquired(LockAttempt attempt, Duration waited) {
        stopAcquiring(attempt, LockOutcomes.TIMEOUT, null);
    }

    @Override
    public void onFailed(LockAttempt attempt, Duration waited, RuntimeException failure) {
        String outcome = LockOutcomes.of(failure);
        stopAcquiring(attempt, outcome, LockOutcomes.CANCELLED.equals(outcome) ? null : failure);
    }

    @Override
    public void onReleased(LockHandle lock, Duration held) {
        stopHolding(lock, "released");
    }

    @Override
    public void onLost(LockHandle lock) {
        stopHolding(lock, "lost");
    }

    private Acquiring stopAcquiring(LockAttempt attempt, String outcome, RuntimeException failure) {
        Acquiring acquisition = acquiring.remove(attempt);
        if (acquisition != null) {
            if (failure != null) {
                acquisition.observation().error(failure);
            }
            acquisition.observation().lowCardinalityKeyValue("outcome", outcome).stop();
        }
        return acquisition;
    }

    /** An acquisition's observation, and the caller's observation current when it started (or {@code null}). */
    private record Acquiring(Observation observation, Observation caller) {
    }

    private void stopHolding(LockHandle lock, String outcome) {
        Observation observation = holding.remove(lock);
        if (observation != null) {
            observation.lowCardinalityKeyValue("outcome", outcome).stop();
        }
    }
}
