package io.dynamolock.kotlin

import io.dynamolock.autoconfigure.DynamoLockObservationAutoConfiguration
import io.dynamolock.core.LockTemplate
import io.micrometer.observation.Observation
import io.micrometer.observation.ObservationHandler
import io.micrometer.observation.ObservationRegistry
import java.util.concurrent.ConcurrentHashMap
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.reactor.ReactorContext
import kotlinx.coroutines.runBlocking
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test
import org.springframework.boot.autoconfigure.AutoConfigurations
import reactor.util.context.Context

/** A coroutine of a WebFlux handler (Boot's default, limited propagation): the request's observation is in its ReactorContext only. */
class WithLockObservationTests {

    @Test
    fun withLockIsInTheTraceOfTheObservationInItsReactorContext() {
        val parents = ConcurrentHashMap<String, String>()
        val registry = ObservationRegistry.create()
        registry.observationConfig().observationHandler(object : ObservationHandler<Observation.Context> {
            override fun supportsContext(context: Observation.Context) = true
            override fun onStart(context: Observation.Context) {
                parents[context.name ?: "?"] = context.parentObservation?.contextView?.name ?: "none"
            }
        })
        SuspendQueueLockedTests.contextRunner()
            .withConfiguration(AutoConfigurations.of(DynamoLockObservationAutoConfiguration::class.java))
            .withBean(ObservationRegistry::class.java, { registry })
            .run { context ->
                val locks = context.getBean(LockTemplate::class.java)
                val request = Observation.start("http.request", registry)
                runBlocking(Dispatchers.Default + ReactorContext(Context.of("micrometer.observation", request))) {
                    locks.withLock("obs-withlock") { }
                }
                request.stop()
                assertThat(parents).containsEntry("dynamolock.lock.acquire", "http.request")
                    .containsEntry("dynamolock.lock.hold", "http.request")
            }
    }
}
