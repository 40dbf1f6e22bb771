package io.dynamolock.kotlin

import io.dynamolock.annotation.QueueLocked
import io.dynamolock.core.LockOperations
import io.dynamolock.core.test.Await
import io.dynamolock.core.test.DynamoDbLocal
import io.dynamolock.core.test.EventLoopProbe
import java.time.Duration
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test
import org.springframework.beans.factory.annotation.Autowired
import org.springframework.boot.SpringBootConfiguration
import org.springframework.boot.autoconfigure.EnableAutoConfiguration
import org.springframework.boot.test.context.SpringBootTest
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient
import org.springframework.context.annotation.Import
import org.springframework.stereotype.Service
import org.springframework.test.context.DynamicPropertyRegistry
import org.springframework.test.context.DynamicPropertySource
import org.springframework.test.web.reactive.server.WebTestClient
import org.springframework.web.bind.annotation.PathVariable
import org.springframework.web.bind.annotation.PostMapping
import org.springframework.web.bind.annotation.RestController

/**
 * A WebFlux application on Netty whose `suspend fun` handler calls a `@QueueLocked suspend fun`, by many clients
 * at once: the counter is exact, one body runs at a time, and no event-loop thread is ever parked (the
 * [EventLoopProbe]; [theProbeCatchesACoroutineHandlerThatBlocksItsEventLoop] shows that it catches a blocking
 * coroutine handler).
 */
@SpringBootTest(classes = [CoroutineWebFluxTests.App::class], webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient(timeout = "PT30S")
class CoroutineWebFluxTests {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Counter::class, CounterController::class, BlockingCounterController::class)
    class App

    @Autowired
    lateinit var client: WebTestClient

    @Autowired
    lateinit var counter: Counter

    @Test
    fun concurrentCoroutineHandlersRunOneBodyAtATimeWithoutBlockingAnEventLoop() {
        // One call first: Spring invokes a coroutine handler through kotlin-reflect, whose lazy metadata is built
        // under a lock the first time; concurrent first calls park event loops there, in Spring and Kotlin, not in
        // dynamolock (seen by the probe in this test's first version).
        client.post().uri("/counters/warm-up").exchange().expectStatus().isOk
        EventLoopProbe().use { probe ->
            runBlocking(Dispatchers.IO) {
                withTimeout(60_000) {
                    (1..6).map {
                        async { repeat(5) { client.post().uri("/counters/web-kt").exchange().expectStatus().isOk } }
                    }.awaitAll()
                }
            }
            assertThat(counter.value("web-kt")).isEqualTo(30)
            assertThat(counter.maxInside()).`as`("bodies inside at once").isEqualTo(1)
            assertThat(probe.blocked()).`as`("event loops parked or waiting").isEmpty()
        }
    }

    @Autowired
    lateinit var locks: LockOperations

    @Test
    fun theProbeCatchesACoroutineHandlerThatBlocksItsEventLoop() {
        client.post().uri("/counters/warm-up-2").exchange().expectStatus().isOk
        EventLoopProbe().use { probe ->
            val holder = locks.acquire("web-kt-2", Duration.ofSeconds(5))
            val request = CompletableFuture.runAsync {
                client.post().uri("/blocking/web-kt-2").exchange().expectStatus().isOk
            }
            // Held until the probe has seen the handler's event loop parked in runBlocking, waiting for the lock.
            Await.until(Duration.ofSeconds(20), "the blocking handler to be seen parked on its event loop") {
                probe.blocked().any { it.contains("BlockingCounterController.increment") }
            }
            holder.release()
            request.get(30, TimeUnit.SECONDS)
            assertThat(counter.value("web-kt-2")).isEqualTo(1)
        }
    }

    @RestController
    class CounterController(private val counter: Counter) {

        @PostMapping("/counters/{id}")
        suspend fun increment(@PathVariable id: String): Int = counter.increment(id)
    }

    /** The mistake the probe must catch: blocking the handler's thread, an event loop, until the lock is granted. */
    @RestController
    class BlockingCounterController(private val counter: Counter) {

        @PostMapping("/blocking/{id}")
        suspend fun increment(@PathVariable id: String): Int = runBlocking { counter.increment(id) }
    }

    @Service
    class Counter {

        private val values = ConcurrentHashMap<String, Int>()
        private val inside = AtomicInteger()
        private val maxInside = AtomicInteger()

        /** Reads, suspends 20 ms, writes: two bodies at once would lose an update. */
        @QueueLocked(entity = ["#id"], maxWait = "60s")
        suspend fun increment(id: String): Int {
            maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max)
            val n = values.getOrDefault(id, 0) + 1
            delay(20)
            values[id] = n
            inside.decrementAndGet()
            return n
        }

        fun value(id: String): Int = values.getOrDefault(id, 0)

        fun maxInside(): Int = maxInside.get()
    }

    companion object {
        @JvmStatic
        @DynamicPropertySource
        fun properties(registry: DynamicPropertyRegistry) {
            val local = DynamoDbLocal.shared()
            val table = local.newLockTable()
            registry.add("dynamolock.table-name") { table }
            registry.add("dynamolock.dynamodb.endpoint") { local.endpoint() }
            registry.add("dynamolock.dynamodb.region") { "us-east-1" }
            registry.add("dynamolock.dynamodb.access-key-id") { "local" }
            registry.add("dynamolock.dynamodb.secret-access-key") { "local" }
            registry.add("dynamolock.poll-interval.min") { "10ms" }
            registry.add("dynamolock.poll-interval.max") { "100ms" }
        }
    }
}
