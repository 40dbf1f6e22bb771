package io.dynamolock.reactive;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.function.Supplier;
import org.springframework.util.ClassUtils;
import reactor.util.context.ContextView;

/**
 * The Micrometer {@link Observation} a subscriber's Reactor context carries (WebFlux keeps the request's there),
 * made the thread's current observation while a lock is asked for, so that the observations of the acquisition and
 * the hold ({@code LockObservationListener}, which reads the thread's) are in the request's trace. Without it they
 * were parentless roots: with Boot's default ({@code limited}) context propagation no thread local is restored
 * from the Reactor context. An observation already current on the thread is left as it is: the caller chose it.
 * Micrometer is optional: its classes are touched only by {@link Scoped}, loaded only when they are present.
 */
final class SubscriberObservation {

    /**
     * {@code ObservationThreadLocalAccessor.KEY}, spelled out: that class implements context-propagation's accessor,
     * a library Micrometer does not bring.
     */
    static final String KEY = "micrometer.observation";

    static final String OBSERVATION = "io.micrometer.observation.Observation";

    private static final boolean PRESENT = ClassUtils.isPresent(OBSERVATION,
            SubscriberObservation.class.getClassLoader());

    private SubscriberObservation() {
    }

    /** {@code call}'s answer, got with the subscriber's observation current if the thread has none. */
    static <T> T around(ContextView context, Supplier<T> call) {
        Object observation = PRESENT ? context.getOrDefault(KEY, null) : null;
        return observation == null ? call.get() : Scoped.around(observation, call);
    }

    private static final class Scoped {

        static <T> T around(Object candidate, Supplier<T> call) {
            // NOOP reads the thread's scope, which every registry Micrometer makes shares.
            if (!(candidate instanceof Observation observation)
                    || ObservationRegistry.NOOP.getCurrentObservation() != null) {
                return call.get();
            }
            try (Observation.Scope scope = observation.openScope()) {
                return call.get();
            }
        }
    }
}
