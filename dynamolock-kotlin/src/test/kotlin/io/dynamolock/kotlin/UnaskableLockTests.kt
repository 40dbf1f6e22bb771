package io.dynamolock.kotlin

import io.dynamolock.annotation.QueueLocked
import io.dynamolock.core.LockTemplate
import java.util.concurrent.CompletableFuture
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test
import org.springframework.stereotype.Service

/**
 * A `@QueueLocked` call whose lock cannot be asked for (the entity null, blank, a value that arrives later, or an
 * expression that throws): a `Flow` fails when collected, as the flow's other errors do, and a `suspend fun` throws;
 * either with the error the call threw before, without a lock and without calling the method.
 */
class UnaskableLockTests {

    private val contextRunner = SuspendQueueLockedTests.contextRunner().withBean(Keyed::class.java)

    @Test
    fun aFlowWhoseLockCannotBeAskedForFailsWhenCollectedWithoutCallingTheMethod() {
        contextRunner.run { context ->
            val keyed = context.getBean(Keyed::class.java)
            val of = "@QueueLocked entity expression '#key' of ${Keyed::class.java.name}"
            assertThat(collected(keyed.flowOf(null))).isInstanceOf(IllegalArgumentException::class.java)
                .hasMessageContaining("$of.flowOf(Object) evaluated to null; a lock needs a non-blank entity")
            assertThat(collected(keyed.flowOf("  "))).isInstanceOf(IllegalArgumentException::class.java)
                .hasMessageContaining("evaluated to '  '")
            assertThat(collected(keyed.flowOf(CompletableFuture.completedFuture("order-1"))))
                .isInstanceOf(IllegalArgumentException::class.java)
                .hasMessageContaining("evaluated to a java.util.concurrent.CompletableFuture")
            // SpEL passes on what a method it calls throws.
            assertThat(collected(keyed.flowOfTail("ab"))).isInstanceOf(StringIndexOutOfBoundsException::class.java)
                .hasMessageContaining("begin 3, end 2")
            assertThat(keyed.calls.get()).`as`("calls of the methods").isZero()
            assertThat(context.getBean(LockTemplate::class.java).activeLocks()).isEmpty()
        }
    }

    /** A suspend function already threw, as a caller of one expects: unchanged. */
    @Test
    fun aSuspendFunctionWhoseLockCannotBeAskedForThrowsWithoutRunning() {
        contextRunner.run { context ->
            val keyed = context.getBean(Keyed::class.java)
            assertThat(thrown { keyed.suspendOf(null) }).isInstanceOf(IllegalArgumentException::class.java)
                .hasMessageContaining("@QueueLocked entity expression '#key' of ${Keyed::class.java.name}"
                    + ".suspendOf(Object, Continuation) evaluated to null")
            assertThat(thrown { keyed.suspendOf(CompletableFuture.completedFuture("order-1")) })
                .isInstanceOf(IllegalArgumentException::class.java)
                .hasMessageContaining("evaluated to a java.util.concurrent.CompletableFuture")
            assertThat(keyed.calls.get()).`as`("calls of the method").isZero()
            assertThat(context.getBean(LockTemplate::class.java).activeLocks()).isEmpty()
        }
    }

    /** What collecting [flow] throws; the call that made it must not have. */
    private fun collected(flow: Flow<*>): Throwable? =
        thrown { flow.toList() }

    private fun thrown(call: suspend () -> Unit): Throwable? =
        runBlocking(Dispatchers.Default) { withTimeout(30_000) { runCatching { call() }.exceptionOrNull() } }

    @Service
    class Keyed {
        /** Calls of the methods: read through the proxy, which hands them on to the bean. */
        val calls = AtomicInteger()

        @QueueLocked(entity = ["#key"])
        fun flowOf(key: Any?): Flow<String> {
            calls.incrementAndGet()
            return flow { emit("ran") }
        }

        @QueueLocked(entity = ["#key.substring(3)"])
        fun flowOfTail(key: String): Flow<String> {
            calls.incrementAndGet()
            return flow { emit("ran") }
        }

        @QueueLocked(entity = ["#key"])
        suspend fun suspendOf(key: Any?): String {
            calls.incrementAndGet()
            return "ran"
        }
    }
}
