package io.dynamolock.kotlin

import io.dynamolock.annotation.QueueLocked
import io.dynamolock.core.LockOperations
import io.dynamolock.core.LockWaitTimeoutException
import io.dynamolock.core.test.Await
import io.dynamolock.kotlin.SuspendQueueLockedTests.CounterService
import java.time.Duration
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicReference
import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.CoroutineContext
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.ThreadContextElement
import kotlinx.coroutines.cancel
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.launch
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test
import org.springframework.stereotype.Service

/**
 * What `withLock` and `@QueueLocked` suspend functions wait for before they release: the coroutines of proxied calls
 * made in them (also one whose coroutine starts only after the cancel), not coroutines detached from them, and
 * without keeping every ended one.
 */
class CoroutineWaitTests {

    private val contextRunner = SuspendQueueLockedTests.contextRunner()

    /**
     * A @QueueLocked suspend fun calls another @QueueLocked suspend fun (another entity) through its proxy and is
     * cancelled in the instant the inner call's coroutine starts (the inner lock granted, its coroutine not yet
     * run), on Dispatchers.Unconfined: the same window withLock now covers with PENDING_CALLS. The outer lock must
     * be kept until the inner call's coroutine has ended, since its first segment runs anyway.
     */
    @Test
    fun aSuspendFunctionCancelledAsANestedProxiedCallsCoroutineStartsKeepsItsLockUntilThatCoroutineHasEnded() {
        keepsItsLockUntilTheNestedCallHasEnded("order-n1",
            { nests, _, _ -> nests.incrementInner("order-n1", "order-n1-b") },
            { call, atGate, _ ->
                withContext(Dispatchers.IO) { atGate.get(30, TimeUnit.SECONDS) } // the inner call's coroutine starting
                call.cancel()
            })
    }

    /** The same, the outer body giving up on the inner call (a cancelled child) and returning normally. */
    @Test
    fun aSuspendFunctionThatGivesUpOnANestedCallAsItsCoroutineStartsKeepsItsLockUntilThatCoroutineHasEnded() {
        keepsItsLockUntilTheNestedCallHasEnded("order-n2",
            { nests, atGate, returned -> nests.giveUpOnInner("order-n2", "order-n2-b", atGate, returned) },
            { _, _, returned -> withContext(Dispatchers.IO) { returned.await() } })
    }

    /**
     * Runs [outer] on Dispatchers.Unconfined, its nested call's coroutine held at its start; once [atTheInstant]
     * has cancelled it or seen it give up, another caller of [order] must not be granted before that coroutine ran.
     */
    private fun keepsItsLockUntilTheNestedCallHasEnded(order: String,
            outer: suspend (Nests, CompletableFuture<Unit>, CompletableDeferred<Unit>) -> Unit,
            atTheInstant: suspend (Job, CompletableFuture<Unit>, CompletableDeferred<Unit>) -> Unit) {
        contextRunner.withBean(Nests::class.java).run { context ->
            val counters = context.getBean(CounterService::class.java)
            val nests = context.getBean(Nests::class.java)
            val locks = context.getBean(LockOperations::class.java)
            val atGate = CompletableFuture<Unit>()
            val go = CompletableFuture<Unit>()
            val inner = "$order-b"
            runBlocking(Dispatchers.Default) {
                val returned = CompletableDeferred<Unit>()
                val call = launch(Dispatchers.Unconfined + SecondBodyGate(atGate, go)) { outer(nests, atGate, returned) }
                atTheInstant(call, atGate, returned)
                val next = runCatching {
                    locks.withLock(order, wait = Duration.ofSeconds(2)) { counters.read(inner) }
                }
                go.complete(Unit)
                call.join()
                Await.until(Duration.ofSeconds(10), "the inner call's own lock to be released") {
                    locks.queue(inner, null).entries().isEmpty()
                }
                val afterwards = counters.read(inner)
                assertThat(next.exceptionOrNull()).`as`("granted $order while the nested proxied call could still"
                        + " start (the next holder read $inner = ${next.getOrNull()}; the nested call wrote it"
                        + " afterwards: now $afterwards)")
                    .isInstanceOf(LockWaitTimeoutException::class.java)
            }
        }
    }

    @Service
    class Nests(private val counters: CounterService) {
        @QueueLocked(entity = ["#orderId"], maxWait = "2s")
        suspend fun incrementInner(orderId: String, inner: String) {
            counters.incrementAtStart(inner)
        }

        @QueueLocked(entity = ["#orderId"], maxWait = "2s")
        suspend fun giveUpOnInner(orderId: String, inner: String, atGate: CompletableFuture<Unit>,
                returned: CompletableDeferred<Unit>) {
            kotlinx.coroutines.coroutineScope {
                val child = launch { counters.incrementAtStart(inner) }
                withContext(Dispatchers.IO) { atGate.get(30, TimeUnit.SECONDS) }
                child.cancel() // gives up on it as its coroutine starts
            }
            returned.complete(Unit)
        }
    }

    /**
     * Holds, once, the start on a Reactor parallel thread of a coroutine whose CoroutineBody element is not the first
     * one seen (the nested call's, not the outer call's), until [go].
     */
    class SecondBodyGate(private val atGate: CompletableFuture<Unit>, private val go: CompletableFuture<Unit>) :
        AbstractCoroutineContextElement(Key), ThreadContextElement<Unit> {
        companion object Key : CoroutineContext.Key<SecondBodyGate>

        private val first = AtomicReference<Any>()
        private val once = AtomicBoolean()

        override fun updateThreadContext(context: CoroutineContext) {
            val body = context.fold<Any?>(null) { found, e ->
                if (e.javaClass.name == "io.dynamolock.annotation.CoroutineBody") e else found
            } ?: return
            first.compareAndSet(null, body)
            if (first.get() !== body && Thread.currentThread().name.startsWith("parallel")
                    && once.compareAndSet(false, true)) {
                atGate.complete(Unit)
                go.join()
            }
        }

        override fun restoreThreadContext(context: CoroutineContext, oldState: Unit) {}
    }

    /**
     * A withLock block starts a listener in an application scope with its own context (for MDC, tracing, the
     * Reactor context), as coroutines outside structured concurrency: withLock no longer returns, and its lock
     * stays held (renewed) for as long as the listener runs.
     */
    @Test
    fun withLockReturnsWhileACoroutineItsBlockDetachedRunsOn() {
        contextRunner.run { context ->
            val locks = context.getBean(LockOperations::class.java)
            val appScope = CoroutineScope(SupervisorJob() + Dispatchers.Default)
            val stop = CompletableDeferred<Unit>()
            try {
                runBlocking(Dispatchers.Default) {
                    val returned = CompletableDeferred<String>()
                    val caller = launch {
                        returned.complete(locks.withLock("order-dt") {
                            appScope.launch(currentCoroutineContext().minusKey(Job)) { stop.await() } // a listener
                            "done"
                        })
                    }
                    val got = withTimeoutOrNull(5_000) { returned.await() }
                    val heldMeanwhile = locks.queue("order-dt", null).entries().size
                    stop.complete(Unit)
                    caller.join()
                    assertThat(got).`as`("withLock returned within 5 s (the lock's queue meanwhile: $heldMeanwhile entries)")
                        .isEqualTo("done")
                }
            } finally {
                stop.complete(Unit)
                appScope.cancel()
            }
        }
    }

    /** A long-running @QueueLocked suspend fun (a drain loop): every coroutine it ever started stays referenced. */
    @Test
    fun aLongRunningSuspendFunctionDoesNotKeepEveryCoroutineItStarted() {
        contextRunner.withBean(Drains::class.java).run { context ->
            val drains = context.getBean(Drains::class.java)
            val retained = runBlocking(Dispatchers.Default) { drains.drain("order-drain", 20_000) }
            assertThat(retained).`as`("coroutines the call's element still references after 20,000 steps, all ended")
                .isLessThan(100)
        }
    }

    @Service
    class Drains {
        @QueueLocked(entity = ["#orderId"], maxWait = "2s")
        suspend fun drain(orderId: String, steps: Int): Int {
            repeat(steps) { withContext(Dispatchers.IO) { } } // a blocking poll per step
            val body = currentCoroutineContext().fold<Any?>(null) { found, e ->
                if (e.javaClass.name == "io.dynamolock.annotation.CoroutineBody") e else found
            }!!
            val field = body.javaClass.getDeclaredField("coroutines")
            field.isAccessible = true
            return (field.get(body) as Set<*>).size
        }
    }

    @Test
    fun blocksThatLeaveNothingRunningEndAtOnce() {
        contextRunner.run { context ->
            val counters = context.getBean(CounterService::class.java)
            val locks = context.getBean(LockOperations::class.java)
            val holder = locks.acquire("order-s2", Duration.ofSeconds(5))
            try {
                runBlocking(Dispatchers.Default) {
                    kotlinx.coroutines.withTimeout(20_000) {
                        val first = locks.withLock("order-s1") { counters.incrementsOf("order-s1f", 3).first() }
                        assertThat(first).isEqualTo(1)
                        val gaveUp = locks.withLock("order-s1") {
                            withTimeoutOrNull(200) { counters.increment("order-s2") }
                        }
                        assertThat(gaveUp).isNull()
                        locks.withLock("order-s1") { locks.withLock("order-s1") { counters.incrementAtOnce("order-s1") } }
                        locks.withLock("order-s1") { locks.withLock("order-s3") { counters.tokensInside("order-s4") } }
                    }
                }
            } finally {
                holder.release()
            }
        }
    }
}
