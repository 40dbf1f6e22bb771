package io.dynamolock.kotlin

import io.micrometer.observation.Observation
import io.micrometer.observation.ObservationRegistry
import kotlin.coroutines.CoroutineContext

/**
 * The Micrometer `Observation` a coroutine's `ReactorContext` carries (a WebFlux coroutine handler's request's, under
 * Boot's default, limited, context propagation), made the thread's current observation while [withLock] asks for its
 * lock, so that `LockObservationListener` (which reads the thread's) puts the acquisition and the hold in that trace
 * instead of starting new ones. An observation already current on the thread is left as it is: the caller chose it.
 *
 * This repeats autoconfigure's `io.dynamolock.reactive.SubscriberObservation` (for `ReactiveLockTemplate` and
 * `@QueueLocked` suspend functions), which this module cannot call: autoconfigure is not a dependency of it.
 *
 * Micrometer and kotlinx-coroutines-reactor are optional: their classes are touched only when both are present, and
 * Micrometer's only by [Scoped], loaded only then.
 */
internal object ReactorObservation {

    /** `ObservationThreadLocalAccessor.KEY`, spelled out: that class needs context-propagation, not a dependency. */
    private const val KEY = "micrometer.observation"

    private val present: Boolean =
        ReactorScopes.present && ReactorScopes.classesPresent("io.micrometer.observation.Observation")

    /**
     * [call]'s answer, got with the observation in [context]'s `ReactorContext` current if the thread has none. Not
     * a suspend call, so no scope is left open across a suspension (nor on a thread the coroutine leaves).
     */
    fun <T> around(context: CoroutineContext, call: () -> T): T {
        val observation = if (present) ReactorScopes.get(context, KEY) else null
        return if (observation == null) call() else Scoped.around(observation, call)
    }

    private object Scoped {

        fun <T> around(candidate: Any, call: () -> T): T {
            // NOOP reads the thread's scope, which every registry Micrometer makes shares.
            if (candidate !is Observation || ObservationRegistry.NOOP.currentObservation != null) return call()
            return candidate.openScope().use { call() }
        }
    }
}
