package io.dynamolock.kotlin

import io.dynamolock.annotation.QueueLocked
import io.dynamolock.annotation.QueueLockedConfigurationException
import io.dynamolock.annotation.QueueLockedSkippedEvent
import io.dynamolock.annotation.WaitTimeoutPolicy
import io.dynamolock.autoconfigure.DynamoLockAutoConfiguration
import io.dynamolock.core.LockLostException
import io.dynamolock.core.LockOperations
import io.dynamolock.core.LockRequest
import io.dynamolock.core.LockTemplate
import io.dynamolock.core.LockWaitTimeoutException
import io.dynamolock.core.test.Await
import io.dynamolock.core.test.DynamoDbLocal
import java.time.Duration
import java.util.UUID
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.Callable
import java.util.concurrent.CountDownLatch
import kotlinx.coroutines.ThreadContextElement
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.AbstractCoroutineContextElement
import java.util.concurrent.TimeUnit
import java.util.concurrent.CompletableFuture
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Deferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.CoroutineName
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.emitAll
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.map
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.flow.transform
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatExceptionOfType
import org.junit.jupiter.api.Test
import org.springframework.boot.autoconfigure.AutoConfigurations
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration
import org.springframework.boot.test.context.runner.ApplicationContextRunner
import org.springframework.context.event.EventListener
import org.springframework.http.ResponseEntity
import org.springframework.stereotype.Controller
import org.springframework.stereotype.Service
import reactor.core.publisher.Flux
import software.amazon.awssdk.services.dynamodb.DynamoDbClient
import software.amazon.awssdk.services.dynamodb.model.AttributeValue
import software.amazon.awssdk.services.dynamodb.model.BillingMode
import software.amazon.awssdk.services.dynamodb.model.KeyType
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType

/**
 * `@QueueLocked suspend fun` and `withLock`: N coroutines x M increments of one counter in DynamoDB Local, each a
 * read, a `delay(20)` and a write. Without the lock (issue 11: Spring subscribed the body's Mono after the lock
 * was released) updates are lost and several bodies run at once.
 */
class SuspendQueueLockedTests {

    private val contextRunner = contextRunner()

    @Test
    fun suspendFunctionRunsOneBodyAtATimeAndLosesNoUpdate() {
        contextRunner.run { context ->
            val counters = context.getBean(CounterService::class.java)
            runBlocking(Dispatchers.Default) {
                withTimeout(120_000) {
                    (1..8).map { async { repeat(5) { counters.increment("order-1") } } }.awaitAll()
                }
            }
            assertThat(counters.read("order-1")).isEqualTo(40)
            assertThat(counters.maxInside()).isEqualTo(1)
        }
    }

    @Test
    fun withLockRunsOneBlockAtATimeAndANestedCallJoins() {
        contextRunner.run { context ->
            val counters = context.getBean(CounterService::class.java)
            val locks = context.getBean(LockOperations::class.java)
            val inside = AtomicInteger()
            val maxInside = AtomicInteger()
            runBlocking(Dispatchers.Default) {
                withTimeout(120_000) {
                    (1..8).map {
                        async {
                            repeat(5) {
                                locks.withLock("order-2") {
                                    maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max)
                                    val n = counters.read("order-2")
                                    delay(20)
                                    // waits 0: succeeds only by joining the lock held around it
                                    locks.withLock("order-2", wait = java.time.Duration.ZERO) {
                                        counters.write("order-2", n + 1)
                                    }
                                    inside.decrementAndGet()
                                }
                            }
                        }
                    }.awaitAll()
                }
            }
            assertThat(counters.read("order-2")).isEqualTo(40)
            assertThat(maxInside.get()).isEqualTo(1)
        }
    }

    @Test
    fun aQueueLockedSuspendFunctionCalledInsideWithLockJoinsIt() {
        contextRunner.run { context ->
            val counters = context.getBean(CounterService::class.java)
            val locks = context.getBean(LockOperations::class.java)
            runBlocking(Dispatchers.Default) {
                // incrementAtOnce waits 0 s: it can only succeed by joining the lock held around it
                locks.withLock("order-3") { counters.incrementAtOnce("order-3") }
            }
            assertThat(counters.read("order-3")).isEqualTo(1)
            assertThat(locks.queue("order-3", null).entries()).isEmpty()
        }
    }

    @Test
    fun withLockInsideAQueueLockedSuspendFunctionJoinsIt() {
        contextRunner.run { context ->
            val counters = context.getBean(CounterService::class.java)
            val tokens = runBlocking(Dispatchers.Default) { counters.tokensInside("order-4") }
            assertThat(tokens.second).`as`("the nested withLock's fencing token").isEqualTo(tokens.first)
        }
    }

    /** The same inside withLock of another lock, whose scope the function's coroutine inherits. */
    @Test
    fun withLockInsideAQueueLockedSuspendFunctionCalledInsideWithLockOfAnotherLockJoinsIt() {
        contextRunner.run { context ->
            val counters = context.getBean(CounterService::class.java)
            val locks = context.getBean(LockOperations::class.java)
            val tokens = runBlocking(Dispatchers.Default) {
                locks.withLock("order-4a") { counters.tokensInside("order-4b") }
            }
            assertThat(tokens.second).`as`("the nested withLock's fencing token").isEqualTo(tokens.first)
        }
    }

    /** runBlocking inside a blocking hold, carrying the hold: a suspend function and withLock called in it join it. */
    @Test
    fun aBlockingBridgeThatCarriesTheHoldOfItsThreadJoinsIt() {
        contextRunner.run { context ->
            val counters = context.getBean(CounterService::class.java)
            val locks = locks(context)
            val tokens = locks.execute<List<Long>, RuntimeException>(LockRequest.builder("order-5b").build()) { held ->
                runBlocking(locks.currentScope().asCoroutineContext()) {
                    // incrementAtOnce and withLock wait 0: they succeed only by joining the hold around them
                    counters.incrementAtOnce("order-5b")
                    listOf(held.fencingToken(), locks.withLock("order-5b", wait = Duration.ZERO) { it.fencingToken() })
                }
            }
            assertThat(counters.read("order-5b")).isEqualTo(1)
            assertThat(tokens[1]).`as`("withLock's token against the hold's").isEqualTo(tokens[0])
            assertThat(locks.queue("order-5b", null).entries()).isEmpty()
        }
    }

    /**
     * A coroutine on Dispatchers.Unconfined that a blocking hold's callback resumes runs on the holder's thread,
     * inside the callback, but is no part of it: a `@QueueLocked` suspend function it calls queues behind the hold.
     */
    @Test
    fun aCoroutineResumedInsideAnUnrelatedBlockingHoldDoesNotJoinItThroughASuspendFunction() {
        contextRunner.run { context ->
            val counters = context.getBean(CounterService::class.java)
            val locks = locks(context)
            val tokens = runBlocking(Dispatchers.Default) {
                val signal = CompletableDeferred<Unit>()
                val waiter = async(Dispatchers.Unconfined) {
                    signal.await() // resumed on the holder's thread, inside its callback
                    counters.tokensInside("order-5u").second
                }
                val holder = withContext(Dispatchers.IO) {
                    locks.execute<Long, RuntimeException>(LockRequest.builder("order-5u").build()) { held ->
                        signal.complete(Unit)
                        held.fencingToken()
                    }
                }
                holder to withTimeout(30_000) { waiter.await() }
            }
            assertThat(tokens.second).`as`("the resumed coroutine's token against the holder's")
                .isGreaterThan(tokens.first)
        }
    }

    @Test
    fun anotherCoroutineDoesNotJoin() {
        contextRunner.run { context ->
            val locks = context.getBean(LockOperations::class.java)
            runBlocking(Dispatchers.Default) {
                locks.withLock("order-5") {
                    // a coroutine of its own, not a child of this block: its context does not carry the scope
                    val other = CoroutineScope(Dispatchers.Default).async {
                        locks.withLock("order-5", wait = Duration.ofMillis(300)) { "joined" }
                    }
                    assertThatExceptionOfType(LockWaitTimeoutException::class.java)
                        .isThrownBy { runBlocking { other.await() } }
                }
            }
        }
    }

    @Test
    fun cancellingAWaitingSuspendFunctionLeavesNoEntryAndTheNextCallerIsGrantedAtOnce() {
        contextRunner.run { context ->
            val counters = context.getBean(CounterService::class.java)
            val locks = context.getBean(LockOperations::class.java)
            val holder = locks.acquire("order-6", Duration.ofSeconds(5))
            runBlocking(Dispatchers.Default) {
                val waiting = launch { counters.increment("order-6") }
                Await.until(Duration.ofSeconds(20), "the waiter to queue") { locks.queue("order-6", null).entries().size == 2 }
                waiting.cancelAndJoin()
            }
            Await.until(Duration.ofSeconds(20), "the cancelled entry to leave") { locks.queue("order-6", null).entries().size == 1 }
            holder.release()
            assertThat(locks.tryAcquire("order-6")).hasValueSatisfying { it.release() }
            assertThat(counters.read("order-6")).`as`("the cancelled body never ran").isEqualTo(0)
        }
    }

    @Test
    fun cancellingWithLockWhileHoldingReleasesTheLock() {
        contextRunner.run { context ->
            val locks = context.getBean(LockOperations::class.java)
            val inside = CompletableDeferred<Unit>()
            runBlocking(Dispatchers.Default) {
                val holding = launch { locks.withLock("order-7") { inside.complete(Unit); awaitCancellation() } }
                inside.await()
                holding.cancelAndJoin()
            }
            assertThat(locks.queue("order-7", null).entries()).isEmpty()
        }
    }

    @Test
    fun cancellingASuspendFunctionWhileItHoldsTheLockReleasesIt() {
        contextRunner.run { context ->
            val counters = context.getBean(CounterService::class.java)
            val locks = context.getBean(LockOperations::class.java)
            val inside = CompletableDeferred<Unit>()
            runBlocking(Dispatchers.Default) {
                val holding = launch { counters.holdUntilCancelled("order-13", inside) }
                withTimeout(30_000) { inside.await() }
                assertThat(locks.tryAcquire("order-13")).`as`("held while the body runs").isEmpty()
                holding.cancelAndJoin()
            }
            // The release is made after the cancellation, off the cancelling thread: wait for it, not a lease.
            Await.until(Duration.ofSeconds(10), "the cancelled body's lock to be released") {
                locks.queue("order-13", null).entries().isEmpty()
            }
            assertThat(locks.tryAcquire("order-13")).hasValueSatisfying { it.release() }
        }
    }

    @Test
    fun aCancelledSuspendFunctionKeepsItsLockUntilItsBlockingStepHasEnded() {
        contextRunner.run { context ->
            val counters = context.getBean(CounterService::class.java)
            keepsItsLockOnceCancelledInABlockingStep(context, "order-14") { _, entered, mayFinish ->
                counters.blockingWrite("order-14", entered, mayFinish)
            }
        }
    }

    /** Its body awaits a suspend function it calls through a proxy, which is in a blocking step. */
    @Test
    fun aCancelledSuspendFunctionKeepsItsLockUntilTheBlockingStepOfANestedProxiedCallHasEnded() {
        contextRunner.withBean(OuterService::class.java).run { context ->
            val outer = context.getBean(OuterService::class.java)
            keepsItsLockOnceCancelledInABlockingStep(context, "order-15") { call, entered, mayFinish ->
                outer.writeUnder("order-15", "order-15-b$call", entered, mayFinish)
            }
        }
    }

    /**
     * The same for `withLock`: Spring runs a proxied suspend call as a coroutine without a parent, which the
     * block's structured concurrency does not wait for.
     */
    @Test
    fun aCancelledWithLockKeepsItsLockUntilTheBlockingStepOfANestedProxiedCallHasEnded() {
        contextRunner.run { context ->
            val counters = context.getBean(CounterService::class.java)
            val locks = locks(context)
            keepsItsLockOnceCancelledInABlockingStep(context, "order-wl-1") { call, entered, mayFinish ->
                locks.withLock("order-wl-1", wait = Duration.ofSeconds(2)) {
                    counters.blockingWrite("order-wl-1-b$call", entered, mayFinish)
                }
            }
        }
    }

    /**
     * A withLock block gives up on a proxied call (as `withTimeoutOrNull { ... }` does when its time runs out, or a
     * cancelled child job) and then returns normally: the call's coroutine is still in its blocking step, and the
     * lock must wait for it.
     */
    @Test
    fun aWithLockWhoseBlockGivesUpOnAProxiedCallKeepsItsLockUntilTheCallsBlockingStepHasEnded() {
        contextRunner.run { context ->
            val counters = context.getBean(CounterService::class.java)
            val locks = locks(context)
            val entered = CompletableDeferred<Unit>()
            val mayFinish = CountDownLatch(1)
            runBlocking(Dispatchers.Default) {
                val blockReturned = CompletableDeferred<Unit>()
                val first = launch {
                    locks.withLock("order-wl-2") {
                        coroutineScope {
                            val call = launch { counters.blockingWrite("order-wl-2-b1", entered, mayFinish) }
                            entered.await()
                            call.cancelAndJoin() // the call gives up; its coroutine's blocking step runs on
                        }
                        blockReturned.complete(Unit)
                    }
                }
                withTimeout(30_000) { blockReturned.await() }
                val second = runCatching {
                    locks.withLock("order-wl-2", wait = Duration.ofSeconds(2)) {
                        counters.blockingWrite("order-wl-2-b2", CompletableDeferred(), CountDownLatch(0))
                    }
                }
                mayFinish.countDown()
                first.join()
                assertThat(counters.blockingWritesOverlapped.get()).`as`("two bodies under order-wl-2 at once").isFalse()
                assertThat(second.exceptionOrNull()).`as`("granted order-wl-2 beside the given-up call's blocking step")
                    .isInstanceOf(LockWaitTimeoutException::class.java)
            }
        }
    }

    /**
     * A withLock block is cancelled in the instant the coroutine of a proxied `@QueueLocked` call it made starts
     * (on Dispatchers.Unconfined, as WebFlux runs handlers): that coroutine has not run yet, but its first segment
     * will, so the lock must wait for the call.
     */
    @Test
    fun aWithLockCancelledAsItsProxiedCallsCoroutineStartsKeepsItsLockUntilThatCoroutineHasEnded() {
        contextRunner.run { context ->
            val counters = context.getBean(CounterService::class.java)
            val locks = locks(context)
            val atGate = CompletableFuture<Unit>()
            val go = CompletableFuture<Unit>()
            runBlocking(Dispatchers.Default) {
                val call = launch(Dispatchers.Unconfined + StartGate(atGate, go)) {
                    locks.withLock("order-wl-3") { counters.incrementAtStart("order-wl-3-b") }
                }
                withContext(Dispatchers.IO) { atGate.get(30, TimeUnit.SECONDS) } // the proxied call's coroutine starting
                call.cancel()
                val next = runCatching {
                    locks.withLock("order-wl-3", wait = Duration.ofSeconds(2)) { counters.read("order-wl-3-b") }
                }
                go.complete(Unit)
                call.join()
                Await.until(Duration.ofSeconds(10), "the proxied call's own lock to be released") {
                    locks.queue("order-wl-3-b", null).entries().isEmpty()
                }
                val afterwards = counters.read("order-wl-3-b")
                assertThat(next.exceptionOrNull()).`as`("granted order-wl-3 while its cancelled block's proxied call"
                        + " could still start (the next holder read order-wl-3-b = ${next.getOrNull()}; the cancelled"
                        + " block's proxied body wrote it afterwards: now $afterwards)")
                    .isInstanceOf(LockWaitTimeoutException::class.java)
            }
        }
    }

    /** The same for a `@QueueLocked suspend fun` whose body gives up on a proxied call and returns. */
    @Test
    fun aSuspendFunctionThatGivesUpOnAProxiedCallKeepsItsLockUntilTheCallsBlockingStepHasEnded() {
        contextRunner.withBean(GivesUp::class.java).run { context ->
            val counters = context.getBean(CounterService::class.java)
            val givesUp = context.getBean(GivesUp::class.java)
            val entered = CompletableDeferred<Unit>()
            val mayFinish = CountDownLatch(1)
            runBlocking(Dispatchers.Default) {
                val returned = CompletableDeferred<Unit>()
                val first = launch { givesUp.giveUpOnInner("order-gu", "order-gu-b1", entered, mayFinish, returned) }
                withTimeout(30_000) { returned.await() }
                val second = runCatching { givesUp.writeUnder("order-gu", "order-gu-b2") }
                mayFinish.countDown()
                first.join()
                assertThat(counters.blockingWritesOverlapped.get()).`as`("two bodies under order-gu at once").isFalse()
                assertThat(second.exceptionOrNull()).`as`("granted order-gu beside the given-up call's blocking step")
                    .isInstanceOf(LockWaitTimeoutException::class.java)
            }
        }
    }

    @Service
    class GivesUp(private val counters: CounterService) {
        @QueueLocked(entity = ["#orderId"], maxWait = "2s")
        suspend fun giveUpOnInner(orderId: String, inner: String, entered: CompletableDeferred<Unit>,
                mayFinish: CountDownLatch, returned: CompletableDeferred<Unit>) {
            giveUp(counters, inner, entered, mayFinish)
            returned.complete(Unit)
        }

        @QueueLocked(entity = ["#orderId"], maxWait = "2s")
        suspend fun writeUnder(orderId: String, inner: String) {
            counters.blockingWrite(inner, CompletableDeferred(), CountDownLatch(0))
        }

        companion object {
            /** Starts a proxied blocking write and gives up on it once it is in its blocking step. */
            suspend fun giveUp(counters: CounterService, inner: String, entered: CompletableDeferred<Unit>,
                    mayFinish: CountDownLatch) = coroutineScope {
                val call = launch { counters.blockingWrite(inner, entered, mayFinish) }
                entered.await()
                call.cancelAndJoin()
            }
        }
    }

    /**
     * The same body declared `Any?` and returning a `Deferred`, which fails the call for being late work: that
     * refusal is a failure of the body like any other, so the lock is released only once the given-up call's
     * blocking step has ended, and not beside it.
     */
    @Test
    fun aSuspendFunctionRefusedForItsResultKeepsItsLockUntilAGivenUpCallsBlockingStepHasEnded() {
        contextRunner.withBean(GivesUpAny::class.java).run { context ->
            val counters = context.getBean(CounterService::class.java)
            val givesUp = context.getBean(GivesUpAny::class.java)
            val entered = CompletableDeferred<Unit>()
            val mayFinish = CountDownLatch(1)
            runBlocking(Dispatchers.Default) {
                val returned = CompletableDeferred<Unit>()
                val first = async {
                    runCatching { givesUp.giveUpOnInner("order-gr", "order-gr-b1", entered, mayFinish, returned) }
                }
                withTimeout(30_000) { returned.await() }
                val second = runCatching { givesUp.writeUnder("order-gr", "order-gr-b2") }
                mayFinish.countDown()
                assertThat(first.await().exceptionOrNull()).isInstanceOf(IllegalStateException::class.java)
                    .hasMessageContaining("returned a " + CompletableDeferred<Int>(1).javaClass.name)
                assertThat(counters.blockingWritesOverlapped.get()).`as`("two bodies under order-gr at once").isFalse()
                assertThat(second.exceptionOrNull()).`as`("granted order-gr beside the given-up call's blocking step")
                    .isInstanceOf(LockWaitTimeoutException::class.java)
            }
        }
    }

    @Service
    class GivesUpAny(private val counters: CounterService) {
        @QueueLocked(entity = ["#orderId"], maxWait = "2s")
        suspend fun giveUpOnInner(orderId: String, inner: String, entered: CompletableDeferred<Unit>,
                mayFinish: CountDownLatch, returned: CompletableDeferred<Unit>): Any? {
            GivesUp.giveUp(counters, inner, entered, mayFinish)
            returned.complete(Unit)
            return CompletableDeferred(1) // done, and still refused: a Deferred is not asked whether it is
        }

        @QueueLocked(entity = ["#orderId"], maxWait = "2s")
        suspend fun writeUnder(orderId: String, inner: String) {
            counters.blockingWrite(inner, CompletableDeferred(), CountDownLatch(0))
        }
    }

    /** The runBlocking bridge carries a blocking hold into a `@QueueLocked` Flow that waits 0 s. */
    @Test
    fun aBlockingBridgeThatCarriesTheHoldOfItsThreadJoinsItInAFlow() {
        contextRunner.withBean(NoWaitFlows::class.java).run { context ->
            val flows = context.getBean(NoWaitFlows::class.java)
            val locks = locks(context)
            val got = locks.execute<List<Int>, RuntimeException>(LockRequest.builder("order-fb").build()) {
                runBlocking(locks.currentScope().asCoroutineContext()) { flows.ones("order-fb").toList() }
            }
            assertThat(got).containsExactly(1)
        }
    }

    @Service
    class NoWaitFlows {
        @QueueLocked(entity = ["#orderId"], maxWait = "0s")
        fun ones(orderId: String): Flow<Int> = flow { emit(1) }
    }

    /** The same for a `Flow`: the collector's cancellation waits for the collection's blocking step. */
    @Test
    fun aCancelledFlowKeepsItsLockUntilItsBlockingStepHasEnded() {
        contextRunner.run { context ->
            val counters = context.getBean(CounterService::class.java)
            keepsItsLockOnceCancelledInABlockingStep(context, "order-16") { _, entered, mayFinish ->
                counters.blockingWrites("order-16", entered, mayFinish).collect {}
            }
        }
    }

    /** And for a `Flow` made and collected in a cancelled suspend function: its lock waits for the collection too. */
    @Test
    fun aCancelledSuspendFunctionKeepsItsLockUntilTheBlockingStepOfAFlowItCollectsHasEnded() {
        contextRunner.withBean(OuterService::class.java).run { context ->
            val outer = context.getBean(OuterService::class.java)
            keepsItsLockOnceCancelledInABlockingStep(context, "order-17") { call, entered, mayFinish ->
                outer.collectUnder("order-17", "order-17-b$call", entered, mayFinish)
            }
        }
    }

    /** The same for a locked Flow made by the caller and handed to the suspend function that collects it. */
    @Test
    fun aCancelledSuspendFunctionKeepsItsLockUntilTheBlockingStepOfAFlowItWasGivenHasEnded() {
        contextRunner.withBean(OuterService::class.java).run { context ->
            val outer = context.getBean(OuterService::class.java)
            val counters = context.getBean(CounterService::class.java)
            keepsItsLockOnceCancelledInABlockingStep(context, "order-18") { call, entered, mayFinish ->
                outer.collectGiven("order-18", counters.blockingWrites("order-18-b$call", entered, mayFinish))
            }
        }
    }

    /**
     * A listener coroutine on Dispatchers.Unconfined (no lock of its own), resumed by a @QueueLocked suspend fun on
     * that fun's thread, collects an unrelated @QueueLocked Flow made earlier: the collection is not the fun's, so
     * cancelling the fun releases its lock at once, whatever the unrelated collection still does.
     */
    @Test
    fun aCancelledSuspendFunctionIsNotKeptByAFlowThatAnUnrelatedCoroutineItResumedCollects() {
        contextRunner.withBean(Announcer::class.java).run { context ->
            val counters = context.getBean(CounterService::class.java)
            val announcer = context.getBean(Announcer::class.java)
            val enteredB = CompletableDeferred<Unit>()
            val mayFinishB = CountDownLatch(1)
            val stream = counters.blockingWrites("order-19-b", enteredB, mayFinishB) // made outside any coroutine
            runBlocking(Dispatchers.Default) {
                val signal = CompletableDeferred<Unit>()
                val listener = launch(Dispatchers.Unconfined) {
                    signal.await()
                    stream.collect {}
                }
                val announcing = launch { announcer.announce("order-19-a", signal) }
                try {
                    withTimeout(30_000) { enteredB.await() } // the unrelated collection is in its blocking step
                    announcing.cancel()
                    Await.until(Duration.ofSeconds(10), "order-19-a released once its cancelled body ended") {
                        locks(context).queue("order-19-a", null).entries().isEmpty()
                    }
                } finally {
                    mayFinishB.countDown()
                    listener.join()
                    announcing.join()
                }
            }
        }
    }

    /**
     * Cancelled in the instant its coroutine starts (the lock granted, the coroutine not yet run): on
     * Dispatchers.Unconfined, as WebFlux runs handlers, kotlinx checks for the cancellation before the body's
     * element sees the coroutine, so the body's first segment runs anyway; it must run inside the lock, which is
     * released only once the coroutine has ended. A gate on the coroutine's start holds that instant open.
     */
    @Test
    fun aSuspendFunctionCancelledAsItsCoroutineStartsKeepsItsLockUntilTheCoroutineHasEnded() {
        contextRunner.run { context ->
            val counters = context.getBean(CounterService::class.java)
            val atGate = CompletableFuture<Unit>()
            val go = CompletableFuture<Unit>()
            runBlocking(Dispatchers.Default) {
                val call = launch(Dispatchers.Unconfined + StartGate(atGate, go)) { counters.incrementAtStart("order-20") }
                withContext(Dispatchers.IO) { atGate.get(30, TimeUnit.SECONDS) } // granted, its coroutine starting
                call.cancel()
                val next = runCatching { counters.incrementAtStart("order-20") }
                assertThat(next.exceptionOrNull()).`as`("granted while the cancelled call's body could still start")
                    .isInstanceOf(LockWaitTimeoutException::class.java)
                go.complete(Unit)
                call.join()
            }
            Await.until(Duration.ofSeconds(10), "the cancelled call's lock to be released") {
                locks(context).queue("order-20", null).entries().isEmpty()
            }
        }
    }

    /** Holds the first start of a coroutine on a Reactor parallel thread (where a grant resumes it) until [go]. */
    class StartGate(private val atGate: CompletableFuture<Unit>, private val go: CompletableFuture<Unit>) :
        AbstractCoroutineContextElement(Key), ThreadContextElement<Unit> {
        companion object Key : CoroutineContext.Key<StartGate>

        private val once = AtomicBoolean()

        override fun updateThreadContext(context: CoroutineContext) {
            if (Thread.currentThread().name.startsWith("parallel") && once.compareAndSet(false, true)) {
                atGate.complete(Unit)
                go.join()
            }
        }

        override fun restoreThreadContext(context: CoroutineContext, oldState: Unit) {}
    }

    @Service
    class Announcer {
        /** Signals a listener, then works until cancelled (no blocking step of its own). */
        @QueueLocked(entity = ["#orderId"], maxWait = "2s")
        suspend fun announce(orderId: String, signal: CompletableDeferred<Unit>) {
            signal.complete(Unit)
            awaitCancellation()
        }
    }

    /**
     * Makes call 1 of `orderId`'s locked work, cancels it once it is in its blocking step (cancellation is
     * cooperative: the step runs on), then makes call 2 while the step still runs: call 2 must wait out its
     * `maxWait` of 2 s, no two bodies may overlap, and call 1's lock is released once its step has ended.
     */
    private fun keepsItsLockOnceCancelledInABlockingStep(context: org.springframework.context.ApplicationContext,
            orderId: String, call: suspend (call: Int, entered: CompletableDeferred<Unit>, mayFinish: CountDownLatch) -> Unit) {
        val counters = context.getBean(CounterService::class.java)
        val entered = CompletableDeferred<Unit>()
        val mayFinish = CountDownLatch(1)
        runBlocking(Dispatchers.Default) {
            val first = launch { call(1, entered, mayFinish) }
            withTimeout(30_000) { entered.await() }
            first.cancel()
            val second = runCatching { call(2, CompletableDeferred(), CountDownLatch(0)) }
            mayFinish.countDown()
            first.join()
            assertThat(counters.blockingWritesOverlapped.get()).`as`("two bodies under $orderId at once").isFalse()
            assertThat(second.exceptionOrNull()).`as`("granted $orderId beside the cancelled call's blocking step")
                .isInstanceOf(LockWaitTimeoutException::class.java)
        }
        Await.until(Duration.ofSeconds(10), "the cancelled call's lock to be released") {
            locks(context).queue(orderId, null).entries().isEmpty()
        }
    }

    @Service
    class OuterService(private val counters: CounterService) {
        @QueueLocked(entity = ["#orderId"], maxWait = "2s")
        suspend fun writeUnder(orderId: String, inner: String, entered: CompletableDeferred<Unit>,
                mayFinish: CountDownLatch) {
            counters.blockingWrite(inner, entered, mayFinish)
        }

        @QueueLocked(entity = ["#orderId"], maxWait = "2s")
        suspend fun collectGiven(orderId: String, source: Flow<Int>) {
            source.collect {}
        }

        @QueueLocked(entity = ["#orderId"], maxWait = "2s")
        suspend fun collectUnder(orderId: String, inner: String, entered: CompletableDeferred<Unit>,
                mayFinish: CountDownLatch) {
            counters.blockingWrites(inner, entered, mayFinish).collect {}
        }
    }

    private fun locks(context: org.springframework.context.ApplicationContext) =
        context.getBean(LockOperations::class.java)

    @Test
    fun aLeaseLostWhileTheBlockRunsCancelsItWithLockLostException() {
        contextRunner.run { context ->
            val locks = context.getBean(LockTemplate::class.java)
            runBlocking(Dispatchers.Default) {
                val failure = runCatching {
                  withTimeout(30_000) {
                    locks.withLock(LockRequest.of("order-8")) {
                        val own = locks.queue("order-8", null).entries().single()
                        locks.breakLock("order-8", null, own.ticket())
                        awaitCancellation()
                    }
                  }
                }.exceptionOrNull()
                assertThat(failure).isInstanceOf(LockLostException::class.java)
                    .hasMessageContaining("order-8")
            }
            assertThat(locks.queue("order-8", null).entries()).isEmpty()
        }
    }

    @Test
    fun aLeaseLostWhileASuspendFunctionRunsFailsItWithLockLostException() {
        contextRunner.withPropertyValues("dynamolock.on-lost-lease=fail").run { context ->
            val counters = context.getBean(CounterService::class.java)
            runBlocking(Dispatchers.Default) {
                assertThatExceptionOfType(LockLostException::class.java)
                    .isThrownBy { runBlocking { withTimeout(30_000) { counters.breakOwnLockAndWait("order-9") } } }
            }
        }
    }

    /**
     * A suspend function fails after another template broke its lock, and no heartbeat told ours: the loss its release
     * finds is added to its exception as suppressed, once, as for a blocking `@QueueLocked` method.
     */
    @Test
    fun aLossFoundByTheReleaseOfAFailedSuspendFunctionIsAddedToItsException() {
        contextRunner.withPropertyValues("dynamolock.lease-duration=60s", "dynamolock.heartbeat-interval=30s")
            .run { context ->
                val counters = context.getBean(CounterService::class.java)
                LOCAL.client().use { client ->
                    LockTemplate.builder(client).tableName(LOCK_TABLE).build().use { operator ->
                        val failure = runBlocking {
                            runCatching { counters.failAfterABreak("order-lost-unheard", operator) }.exceptionOrNull()
                        }
                        assertThat(failure).isInstanceOf(IllegalStateException::class.java).hasMessage("body failed")
                        // Under -ea kotlinx hands the caller a recovered copy, the function's exception as its cause.
                        val losses = generateSequence(failure) { it.cause }.take(10)
                            .flatMap { it.suppressed.asSequence() }.filterIsInstance<LockLostException>().toList()
                        assertThat(losses).singleElement().extracting { it.message }.asString()
                            .contains("order-lost-unheard")
                    }
                }
            }
    }

    @Test
    fun aFlowIsLockedWhileItIsCollectedNotWhenItIsCreated() {
        contextRunner.run { context ->
            val counters = context.getBean(CounterService::class.java)
            val locks = context.getBean(LockOperations::class.java)
            counters.incrementsOf("order-10", 3) // created, never collected
            assertThat(locks.queue("order-10", null).entries()).`as`("entries before any collection").isEmpty()
            collectsOneAtATime(counters, "order-10", 6) { counters.incrementsOf("order-10", 3) }
            assertThat(locks.queue("order-10", null).entries()).isEmpty()
        }
    }

    /** A suspend function returning a Flow: Spring calls it as a Flux, so every element comes, under the lock. */
    @Test
    fun aSuspendFunctionReturningAFlowEmitsEveryElementUnderTheLock() {
        contextRunner.run { context ->
            val counters = context.getBean(CounterService::class.java)
            collectsOneAtATime(counters, "order-14", 4) { counters.incrementsAfterASuspension("order-14", 3) }
        }
    }

    /**
     * Collects `flows` flows of three increments of `orderId` at once: each collection saw three
     * consecutive values (nobody else wrote while it was collected), none was lost, and one body ran at a time.
     */
    private fun collectsOneAtATime(counters: CounterService, orderId: String, flows: Int,
            increments: suspend () -> Flow<Int>) {
        val collected = runBlocking(Dispatchers.Default) {
            withTimeout(60_000) { (1..flows).map { async { increments().toList() } }.awaitAll() }
        }
        collected.forEach { values -> assertThat(values).containsExactly(values[0], values[0] + 1, values[0] + 2) }
        assertThat(counters.read(orderId)).isEqualTo(3 * flows)
        assertThat(counters.maxInside()).isEqualTo(1)
    }

    private val flowsRunner = contextRunner.withBean(NoWaitFlows::class.java).withBean(Flows::class.java)

    /**
     * "Locked while the flow is collected": while the collector is still inside its `collect` block for the first
     * element, nobody else may be granted the lock (a bridge through a Flux buffered the elements and released the
     * lock once the body had emitted them all).
     */
    @Test
    fun aFlowKeepsItsLockWhileTheCollectorIsStillInsideCollect() {
        flowsRunner.run { context ->
            val flows = context.getBean(Flows::class.java)
            val locks = locks(context)
            runBlocking(Dispatchers.Default) {
                val inCollect = CompletableDeferred<Unit>()
                val mayFinish = CompletableDeferred<Unit>()
                val collector = launch {
                    flows.ticks("order-flow-1", 3).collect {
                        if (it == 0) { inCollect.complete(Unit); mayFinish.await() }
                    }
                }
                withTimeout(30_000) { inCollect.await() }
                val other = runCatching { locks.withLock("order-flow-1", wait = Duration.ofSeconds(2)) { "granted" } }
                mayFinish.complete(Unit)
                collector.join()
                assertThat(other.exceptionOrNull())
                    .`as`("granted order-flow-1 while the first collection was still inside collect {}"
                        + " (got ${other.getOrNull()})")
                    .isInstanceOf(LockWaitTimeoutException::class.java)
            }
        }
    }

    /** `first()` takes one element: the body runs up to its first emit, as a plain flow's does, not a buffer ahead. */
    @Test
    fun firstRunsAFlowsBodyOnlyUpToItsFirstElement() {
        flowsRunner.run { context ->
            val flows = context.getBean(Flows::class.java)
            val got = runBlocking(Dispatchers.Default) {
                withTimeout(30_000) { flows.ticks("order-flow-2", 1000).first() }
            }
            assertThat(got).isEqualTo(0)
            assertThat(flows.produced.get()).`as`("elements the body produced for first()").isEqualTo(1)
            assertThat(locks(context).queue("order-flow-2", null).entries()).`as`("released once first() returned")
                .isEmpty()
        }
    }

    /** A flow's body runs in its collector's context (Flow's context preservation): dispatcher and elements. */
    @Test
    fun aFlowRunsInItsCollectorsContext() {
        flowsRunner.run { context ->
            val flows = context.getBean(Flows::class.java)
            val seen = runBlocking {
                withContext(Dispatchers.IO + CoroutineName("collector") + Marker("marked")) {
                    withTimeout(30_000) { flows.whereItRuns("order-flow-3").first() }
                }
            }
            assertThat(seen).startsWith("collector|marked|").contains("DefaultDispatcher-worker")
        }
    }

    /**
     * A flow that re-emits a locked flow's elements: they reach it in its own context, else its `emit` would fail
     * ("Flow invariant is violated") since the locked body's context carries the lock's scope.
     */
    @Test
    fun aFlowThatReEmitsALockedFlowsElementsEmitsThemInItsOwnContext() {
        flowsRunner.run { context ->
            val flows = context.getBean(Flows::class.java)
            val got = runBlocking(Dispatchers.Default) {
                withTimeout(30_000) {
                    flow { flows.ticks("order-flow-4", 3).collect { emit(it * 10) } }
                        .transform { emit(it + 1) }
                        .toList()
                }
            }
            assertThat(got).containsExactly(1, 11, 21)
        }
    }

    /** Inside the flow's body, withLock, a suspend function and a flow of the same lock that wait 0 s join it. */
    @Test
    fun callsMadeInAFlowsBodyJoinItsLock() {
        flowsRunner.run { context ->
            val flows = context.getBean(Flows::class.java)
            val counters = context.getBean(CounterService::class.java)
            val got = runBlocking(Dispatchers.Default) { withTimeout(30_000) { flows.joined("order-flow-5").toList() } }
            assertThat(got[1]).`as`("withLock's fencing token against the flow's").isEqualTo(got[0])
            assertThat(got.drop(2)).`as`("the nested flow's elements").containsExactly(1L)
            assertThat(counters.read("order-flow-5")).isEqualTo(1)
        }
    }

    /** The flow's body awaits a suspend function it called through a proxy, in its blocking step as it is cancelled. */
    @Test
    fun aCancelledFlowKeepsItsLockUntilTheBlockingStepOfAProxiedCallItMadeHasEnded() {
        flowsRunner.run { context ->
            val flows = context.getBean(Flows::class.java)
            keepsItsLockOnceCancelledInABlockingStep(context, "order-flow-6") { call, entered, mayFinish ->
                flows.writesUnder("order-flow-6", "order-flow-6-b$call", entered, mayFinish).collect {}
            }
        }
    }

    @Test
    fun cancellingAWaitingFlowLeavesNoEntryAndNeverCallsTheMethod() {
        flowsRunner.run { context ->
            val flows = context.getBean(Flows::class.java)
            val locks = locks(context)
            val holder = locks.acquire("order-flow-7", Duration.ofSeconds(5))
            runBlocking(Dispatchers.Default) {
                val waiting = launch { flows.ticks("order-flow-7", 1).collect {} }
                Await.until(Duration.ofSeconds(20), "the collector to queue") {
                    locks.queue("order-flow-7", null).entries().size == 2
                }
                waiting.cancelAndJoin()
            }
            Await.until(Duration.ofSeconds(20), "the cancelled entry to leave") {
                locks.queue("order-flow-7", null).entries().size == 1
            }
            holder.release()
            assertThat(flows.calls.get()).`as`("calls of the method").isEqualTo(0)
        }
    }

    /** Collected inside a blocking hold of its lock without carrying it: waits for itself, and says so. */
    @Test
    fun aFlowWhoseWaitRunsOutFailsWithTheExplainedTimeOutWithoutCallingTheMethod() {
        flowsRunner.run { context ->
            val flows = context.getBean(Flows::class.java)
            val locks = locks(context)
            val failure = locks.execute<Throwable?, RuntimeException>(LockRequest.builder("order-flow-8").build()) {
                runBlocking { runCatching { withTimeout(30_000) { flows.ticksWithin200ms("order-flow-8").toList() } } }
                    .exceptionOrNull()
            }
            assertThat(failure).isInstanceOf(LockWaitTimeoutException::class.java)
                .hasMessageContaining("made on a thread inside a blocking hold of LockHandle[")
            assertThat(flows.calls.get()).`as`("calls of the method").isEqualTo(0)
        }
    }

    @Test
    fun skipOnWaitTimeoutCompletesAFlowEmptyWithoutCallingTheMethod() {
        flowsRunner.withBean(Skips::class.java).run { context ->
            val flows = context.getBean(Flows::class.java)
            val locks = locks(context)
            val holder = locks.acquire("order-flow-9", Duration.ofSeconds(5))
            val skipped = runBlocking(Dispatchers.Default) {
                withTimeout(30_000) { flows.pingsUnlessBusy("order-flow-9").toList() }
            }
            assertThat(skipped).isEmpty()
            assertThat(flows.calls.get()).`as`("calls of the skipped method").isEqualTo(0)
            assertThat(context.getBean(Skips::class.java).events.map { it.entity() }).containsExactly("order-flow-9")
            holder.release()
            runBlocking(Dispatchers.Default) { withTimeout(30_000) { flows.pingsUnlessBusy("order-flow-9").toList() } }
            assertThat(flows.calls.get()).`as`("a free lock calls the method").isEqualTo(1)
        }
    }

    /** A collector kept for the minimum hold would wait an hour: withTimeout would end the test first. */
    @Test
    fun minHoldKeepsTheLockAfterAFlowWasCollectedWithoutKeepingTheCollectorWaiting() {
        flowsRunner.run { context ->
            val flows = context.getBean(Flows::class.java)
            val got = runBlocking(Dispatchers.Default) {
                withTimeout(30_000) { flows.heldAtLeast1h("order-flow-10").toList() }
            }
            assertThat(got).containsExactly(1)
            assertThat(locks(context).tryAcquire("order-flow-10")).`as`("still held after the collection").isEmpty()
        }
    }

    @Test
    fun aLeaseLostWhileAFlowIsCollectedCancelsItWithLockLostException() {
        flowsRunner.withPropertyValues("dynamolock.on-lost-lease=fail").run { context ->
            val flows = context.getBean(Flows::class.java)
            val got = CopyOnWriteArrayList<Int>()
            val failure = runBlocking(Dispatchers.Default) {
                runCatching { withTimeout(30_000) { flows.breaksItsOwnLock("order-flow-11").collect { got.add(it) } } }
                    .exceptionOrNull()
            }
            assertThat(failure).isInstanceOf(LockLostException::class.java).hasMessageContaining("order-flow-11")
            assertThat(got).containsExactly(1)
        }
    }

    /** The flow ran (and emitted): a loss before some nested grant that escapes it reaches the collector as granted. */
    @Test
    fun aLossBeforeANestedGrantEscapingAFlowIsGrantedToTheCollector() {
        flowsRunner.run { context ->
            val flows = context.getBean(Flows::class.java)
            val failure = runBlocking(Dispatchers.Default) {
                runCatching { withTimeout(30_000) { flows.failsWithANestedLoss("order-flow-12").collect { } } }
                    .exceptionOrNull()
            }
            assertThat(failure).isInstanceOfSatisfying(LockLostException::class.java) { lost ->
                assertThat(lost.wasGranted()).isTrue()
                assertThat(lost.cause).hasMessage("a nested wait lost its place")
            }
            assertThat(locks(context).tryAcquire("order-flow-12")).`as`("released").isPresent.get()
                .satisfies({ it.release() })
        }
    }

    /**
     * REVIEW flow17: with on-lost-lease=fail, a lease lost after the grant but before the collector's dispatcher
     * got to start the collection: LockedFlow marks the collection STOPPED ("the collection must not start"), yet the
     * method's flow still runs its code up to its first emit, without the lock.
     */
    @Test
    fun aFlowWhoseLeaseIsLostBeforeItsCollectionStartsDoesNotRunItsBody() {
        flowsRunner.withBean(LossBeforeStart::class.java).withPropertyValues("dynamolock.on-lost-lease=fail")
            .run { context ->
                val flows = context.getBean(LossBeforeStart::class.java)
                val locks = locks(context)
                val executor = java.util.concurrent.ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS,
                    java.util.concurrent.LinkedBlockingQueue())
                try {
                    val holder = locks.acquire("order-flow-r2", Duration.ofSeconds(30))
                    val failure = runBlocking(Dispatchers.Default) {
                        val collection = async(executor.asCoroutineDispatcher()) {
                            runCatching { flows.writes("order-flow-r2").collect {} }.exceptionOrNull()
                        }
                        Await.until(Duration.ofSeconds(20), "the collector to queue") {
                            locks.queue("order-flow-r2", null).entries().size == 2
                        }
                        val mayGo = CountDownLatch(1)
                        executor.execute { mayGo.await() } // the collector's dispatcher is busy
                        holder.release()
                        Await.until(Duration.ofSeconds(20), "the grant's resumption to be dispatched") {
                            executor.queue.size == 1
                        }
                        context.getBean(LockTemplate::class.java).breakLock("order-flow-r2", null,
                            locks.queue("order-flow-r2", null).entries().single().ticket())
                        assertThat(flows.lossSeen.await(20, TimeUnit.SECONDS)).`as`("loss noticed").isTrue()
                        mayGo.countDown()
                        withTimeout(30_000) { collection.await() }
                    }
                    assertThat(failure).isInstanceOf(LockLostException::class.java)
                    assertThat(flows.ranWithoutLease.get())
                        .`as`("the flow's code ran although its lease was lost before its collection started")
                        .isFalse()
                } finally {
                    executor.shutdownNow()
                }
            }
    }

    @Service
    class LossBeforeStart(private val locks: LockOperations) {
        val lossSeen = CountDownLatch(1)
        val ranWithoutLease = AtomicBoolean()

        @QueueLocked(entity = ["#orderId"], maxWait = "30s")
        fun writes(orderId: String): Flow<Int> {
            locks.currentScope().locks().forEach { it.onLost { lossSeen.countDown() } }
            return flow {
                ranWithoutLease.set(lossSeen.count == 0L) // e.g. a write to the guarded resource
                emit(1)
            }
        }
    }

    /**
     * REVIEW flow17: on-lost-lease=fail promises that a lost lease cancels the collection (README "Lost lease",
     * LockedFlow.body's javadoc). Once the loss was noticed (a LockListener heard it), the collection should end
     * with LockLostException promptly, not run on until something else ends it.
     */
    @Test
    fun aLeaseLostWhileAFlowIsCollectedCancelsTheCollectionOnceTheLossIsNoticed() {
        flowsRunner.withBean(LossListener::class.java).withPropertyValues("dynamolock.on-lost-lease=fail")
            .run { context ->
                val flows = context.getBean(Flows::class.java)
                val listener = context.getBean(LossListener::class.java)
                runBlocking(Dispatchers.Default) {
                    val collection = async {
                        runCatching { flows.breaksItsOwnLock("order-flow-r3").collect { } }.exceptionOrNull()
                    }
                    withTimeout(20_000) { listener.lost.await() }
                    val failure = withTimeoutOrNull(10_000) { collection.await() }
                    collection.cancel()
                    assertThat(failure).`as`("how the collection ended within 10 s of the loss being noticed"
                            + " (null: it was still running)").isInstanceOf(LockLostException::class.java)
                }
            }
    }

    class LossListener : io.dynamolock.core.LockListener {
        val lost = CompletableDeferred<Unit>()
        override fun onLost(lock: io.dynamolock.core.LockHandle) {
            lost.complete(Unit)
        }
    }

    /** REVIEW flow17: the root cause, in ReactiveLockTemplate: with failOnLostLease the body is not cancelled. */
    @Test
    fun theReactiveTemplateCancelsItsBodyWhenTheLeaseIsLost() {
        contextRunner.run { context ->
            val locks = context.getBean(LockTemplate::class.java)
            val template = io.dynamolock.reactive.ReactiveLockTemplate(locks, true)
            val cancelled = CompletableFuture<Unit>()
            val failure = CompletableFuture<Throwable>()
            template.execute(LockRequest.of("order-r4")) { _ ->
                locks.breakLock("order-r4", null, locks.queue("order-r4", null).entries().single().ticket())
                reactor.core.publisher.Mono.never<String>().doOnCancel { cancelled.complete(Unit) }
            }.subscribe({ }, { failure.complete(it) })
            assertThat(failure.get(20, TimeUnit.SECONDS)).isInstanceOf(LockLostException::class.java)
            assertThat(runCatching { cancelled.get(10, TimeUnit.SECONDS) }.isSuccess)
                .`as`("the body was cancelled within 10 s of the LockLostException").isTrue()
        }
    }

    /** A thread-local that coroutines carrying this element see, as MDC's or an observation's element does. */
    class Marker(private val value: String) : AbstractCoroutineContextElement(Key), ThreadContextElement<String?> {
        companion object Key : CoroutineContext.Key<Marker> {
            val current = ThreadLocal<String?>()
        }

        override fun updateThreadContext(context: CoroutineContext): String? = current.get().also { current.set(value) }

        override fun restoreThreadContext(context: CoroutineContext, oldState: String?) = current.set(oldState)
    }

    @Service
    class Flows(private val counters: CounterService, private val locks: LockTemplate,
            private val noWait: NoWaitFlows) {
        /** Calls of the methods that count them: each makes a flow. */
        val calls = AtomicInteger()
        /** Elements [ticks] produced. */
        val produced = AtomicInteger()

        @QueueLocked(entity = ["#orderId"], maxWait = "10s")
        fun ticks(orderId: String, count: Int): Flow<Int> {
            calls.incrementAndGet()
            return flow { repeat(count) { produced.incrementAndGet(); emit(it) } }
        }

        @QueueLocked(entity = ["#orderId"], maxWait = "200ms")
        fun ticksWithin200ms(orderId: String): Flow<Int> {
            calls.incrementAndGet()
            return flow { emit(1) }
        }

        @QueueLocked(entity = ["#orderId"], maxWait = "200ms", onWaitTimeout = WaitTimeoutPolicy.SKIP)
        fun pingsUnlessBusy(orderId: String): Flow<Void?> {
            calls.incrementAndGet()
            return flow { }
        }

        @QueueLocked(entity = ["#orderId"], minHold = "1h")
        fun heldAtLeast1h(orderId: String): Flow<Int> = flow { emit(1) }

        /** Where its body runs: its coroutine's name, [Marker]'s value and the thread. */
        @QueueLocked(entity = ["#orderId"], maxWait = "2s")
        fun whereItRuns(orderId: String): Flow<String> = flow {
            val name = currentCoroutineContext()[CoroutineName]?.name
            emit("$name|${Marker.current.get()}|${Thread.currentThread().name}")
        }

        /**
         * Its own lock's fencing token, a nested withLock's, and the elements of a nested flow, after a nested
         * suspend function: all of the same lock, waiting 0 s.
         */
        @QueueLocked(entity = ["#orderId"], maxWait = "2s")
        fun joined(orderId: String): Flow<Long> = flow {
            emit(locks.queue(orderId, null).entries().single().ticket())
            emit(locks.withLock(orderId, wait = Duration.ZERO) { it.fencingToken() })
            counters.incrementAtOnce(orderId)
            emitAll(noWait.ones(orderId).map { it.toLong() })
        }

        /** Calls [CounterService.blockingWrite] through its proxy (a coroutine of its own) while it is collected. */
        @QueueLocked(entity = ["#orderId"], maxWait = "2s")
        fun writesUnder(orderId: String, inner: String, entered: CompletableDeferred<Unit>,
                mayFinish: CountDownLatch): Flow<Int> = flow {
            counters.blockingWrite(inner, entered, mayFinish)
            emit(1)
        }

        @QueueLocked(entity = ["#orderId"], maxWait = "2s")
        fun failsWithANestedLoss(orderId: String): Flow<Int> = flow {
            emit(1)
            throw LockLostException.beforeGrant("a nested wait lost its place")
        }

        @QueueLocked(entity = ["#orderId"], maxWait = "2s")
        fun breaksItsOwnLock(orderId: String): Flow<Int> = flow {
            emit(1)
            locks.breakLock(orderId, null, locks.queue(orderId, null).entries().single().ticket())
            awaitCancellation()
        }
    }

    @Test
    fun skipOnWaitTimeoutReturnsFromASuspendFunctionWithoutRunningItsBody() {
        contextRunner.withBean(Skips::class.java).run { context ->
            val counters = context.getBean(CounterService::class.java)
            val locks = context.getBean(LockOperations::class.java)
            val holder = locks.acquire("order-11", Duration.ofSeconds(5))
            runBlocking(Dispatchers.Default) { withTimeout(30_000) { counters.incrementUnlessBusy("order-11") } }
            assertThat(counters.read("order-11")).`as`("the skipped body never ran").isEqualTo(0)
            assertThat(context.getBean(Skips::class.java).events.map { it.entity() }).containsExactly("order-11")
            holder.release()
            runBlocking(Dispatchers.Default) { withTimeout(30_000) { counters.incrementUnlessBusy("order-11") } }
            assertThat(counters.read("order-11")).`as`("a free lock runs the body").isEqualTo(1)
        }
    }

    @Test
    fun skipOnASuspendFunctionReturningAValueIsRefusedAtStartUp() {
        contextRunner.withBean(SkipWithResult::class.java).run { context ->
            assertThat(context.startupFailure).isInstanceOf(QueueLockedConfigurationException::class.java)
                .hasMessageContaining("@QueueLocked on ${SkipWithResult::class.java.name}.next(String, Continuation):"
                    + " onWaitTimeout = SKIP needs a method returning void, Void or a future of Void (or a suspend"
                    + " function returning Unit): a skipped call has no value to return, and this method returns"
                    + " java.lang.Integer (suspend function)")
        }
    }

    /** A caller kept for the minimum hold would wait an hour: withTimeout would end the test first. */
    @Test
    fun minHoldKeepsTheLockAfterASuspendFunctionReturnsWithoutKeepingTheCallerWaiting() {
        contextRunner.run { context ->
            val counters = context.getBean(CounterService::class.java)
            val locks = context.getBean(LockOperations::class.java)
            runBlocking(Dispatchers.Default) { withTimeout(30_000) { counters.incrementHeldAtLeast1h("order-12") } }
            assertThat(locks.tryAcquire("order-12")).`as`("still held after the body").isEmpty()
            assertThat(counters.read("order-12")).isEqualTo(1)
        }
    }

    @Test
    fun aLockKeptForItsMinimumHoldIsReleasedInTheBackgroundOnceItIsOver() {
        contextRunner.run { context ->
            val counters = context.getBean(CounterService::class.java)
            val locks = context.getBean(LockOperations::class.java)
            runBlocking(Dispatchers.Default) { withTimeout(30_000) { counters.incrementHeldAtLeast1s("order-min-hold") } }
            Await.until(Duration.ofSeconds(20), "the release after the minimum hold") {
                locks.queue("order-min-hold", null).entries().isEmpty()
            }
            assertThat(counters.read("order-min-hold")).isEqualTo(1)
        }
    }

    @Test
    fun aDeferredReturnTypeIsRefusedAtStartUpNamingTheMethodAndWhatIsSupported() {
        contextRunner.withBean(ReturnsDeferred::class.java).run { context ->
            assertThat(context.startupFailure).isInstanceOf(QueueLockedConfigurationException::class.java)
                .hasMessageContaining("@QueueLocked on ${ReturnsDeferred::class.java.name}.later(String): returns"
                    + " kotlinx.coroutines.Deferred, whose work goes on after the method returns")
                .hasMessageContaining("Supported are plain values, CompletableFuture and CompletionStage")
                .hasMessageContaining("Kotlin suspend functions and Kotlin Flow")
        }
    }

    class Skips {
        val events = CopyOnWriteArrayList<QueueLockedSkippedEvent>()

        @EventListener
        fun on(event: QueueLockedSkippedEvent) {
            events.add(event)
        }
    }

    @Service
    class SkipWithResult {
        @QueueLocked(entity = ["#orderId"], maxWait = "0s", onWaitTimeout = WaitTimeoutPolicy.SKIP)
        suspend fun next(orderId: String): Int = 1
    }

    @Service
    class ReturnsDeferred {
        @QueueLocked(entity = ["#orderId"])
        fun later(orderId: String): Deferred<Int> = CompletableDeferred(1)
    }

    @Service
    class CounterService(private val dynamoDb: DynamoDbClient, private val locks: LockTemplate) {

        private val inside = AtomicInteger()
        private val maxInside = AtomicInteger()

        @QueueLocked(entity = ["#orderId"], maxWait = "60s")
        suspend fun increment(orderId: String) {
            maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max)
            val n = read(orderId)
            delay(20)
            write(orderId, n + 1)
            inside.decrementAndGet()
        }

        /** Its first segment, before any suspension, is all of it. */
        @QueueLocked(entity = ["#orderId"], maxWait = "2s")
        suspend fun incrementAtStart(orderId: String) {
            write(orderId, read(orderId) + 1)
        }

        @QueueLocked(entity = ["#orderId"], maxWait = "0s")
        suspend fun incrementAtOnce(orderId: String) {
            write(orderId, read(orderId) + 1)
        }

        @QueueLocked(entity = ["#orderId"], maxWait = "200ms", onWaitTimeout = WaitTimeoutPolicy.SKIP)
        suspend fun incrementUnlessBusy(orderId: String) {
            write(orderId, read(orderId) + 1)
        }

        @QueueLocked(entity = ["#orderId"], minHold = "1h")
        suspend fun incrementHeldAtLeast1h(orderId: String) {
            write(orderId, read(orderId) + 1)
        }

        @QueueLocked(entity = ["#orderId"], minHold = "1s")
        suspend fun incrementHeldAtLeast1s(orderId: String) {
            write(orderId, read(orderId) + 1)
        }

        /** The fencing tokens of this method's lock and of a `withLock` nested in it. */
        @QueueLocked(entity = ["#orderId"], maxWait = "10s")
        suspend fun tokensInside(orderId: String): Pair<Long, Long> {
            val outer = locks.queue(orderId, null).entries().single().ticket()
            val inner = locks.withLock(orderId, wait = Duration.ZERO) { it.fencingToken() }
            return outer to inner
        }

        private val blockingWrites = AtomicInteger()
        val blockingWritesOverlapped = AtomicBoolean()

        /** A blocking write (JDBC, a synchronous SDK) in Dispatchers.IO: a cancellation does not stop it. */
        @QueueLocked(entity = ["#orderId"], maxWait = "2s")
        suspend fun blockingWrite(orderId: String, entered: CompletableDeferred<Unit>, mayFinish: CountDownLatch) {
            if (blockingWrites.incrementAndGet() > 1) blockingWritesOverlapped.set(true)
            try {
                withContext(Dispatchers.IO) {
                    entered.complete(Unit)
                    mayFinish.await()
                }
            } finally {
                blockingWrites.decrementAndGet()
            }
        }

        /** [blockingWrite] as a `Flow`: the blocking step runs while it is collected. */
        @QueueLocked(entity = ["#orderId"], maxWait = "2s")
        fun blockingWrites(orderId: String, entered: CompletableDeferred<Unit>, mayFinish: CountDownLatch): Flow<Int> =
            flow {
                if (blockingWrites.incrementAndGet() > 1) blockingWritesOverlapped.set(true)
                try {
                    withContext(Dispatchers.IO) {
                        entered.complete(Unit)
                        mayFinish.await()
                    }
                } finally {
                    blockingWrites.decrementAndGet()
                }
                emit(1)
            }

        @QueueLocked(entity = ["#orderId"], maxWait = "10s")
        suspend fun holdUntilCancelled(orderId: String, inside: CompletableDeferred<Unit>) {
            inside.complete(Unit)
            awaitCancellation()
        }

        @QueueLocked(entity = ["#orderId"], maxWait = "10s")
        suspend fun failAfterABreak(orderId: String, operator: LockTemplate) {
            operator.breakLock(orderId, null, locks.queue(orderId, null).entries().single().ticket())
            throw IllegalStateException("body failed")
        }

        @QueueLocked(entity = ["#orderId"], maxWait = "10s")
        suspend fun breakOwnLockAndWait(orderId: String) {
            locks.breakLock(orderId, null, locks.queue(orderId, null).entries().single().ticket())
            awaitCancellation()
        }

        @QueueLocked(entity = ["#orderId"], maxWait = "60s")
        fun incrementsOf(orderId: String, times: Int): Flow<Int> = increments(orderId, times)

        @QueueLocked(entity = ["#orderId"], maxWait = "60s")
        suspend fun incrementsAfterASuspension(orderId: String, times: Int): Flow<Int> {
            delay(1)
            return increments(orderId, times)
        }

        private fun increments(orderId: String, times: Int): Flow<Int> = flow {
            maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max)
            repeat(times) {
                val n = read(orderId) + 1
                delay(5)
                write(orderId, n)
                emit(n)
            }
            inside.decrementAndGet()
        }

        fun maxInside(): Int = maxInside.get()

        fun read(id: String): Int = dynamoDb.getItem { it.tableName(COUNTER_TABLE).key(key(id)).consistentRead(true) }
            .item()["n"]?.n()?.toInt() ?: 0

        fun write(id: String, n: Int) {
            dynamoDb.putItem { it.tableName(COUNTER_TABLE).item(key(id) + ("n" to AttributeValue.fromN(n.toString()))) }
        }

        private fun key(id: String) = mapOf("id" to AttributeValue.fromS(id))
    }

    /**
     * A suspend fun declared `Any?` that returns a future still running, or a `Deferred` (done or not: it is not
     * asked): its work would go on after the release, as that of one declared to return a future, which the start
     * refuses. The call fails, the lock released; a future already done is a value like any other. A controller's
     * `Callable`, which Spring MVC would run later, fails it too, with advice to call it in the function instead.
     */
    @Test
    fun aSuspendFunctionReturningUnfinishedWorkThroughAnyFailsAndReleasesTheLock() {
        contextRunner.withBean(AnyReturner::class.java).run { context ->
            val service = context.getBean(AnyReturner::class.java)
            val locks = locks(context)
            val running = CompletableFuture<String>()
            assertThatExceptionOfType(IllegalStateException::class.java)
                .isThrownBy { runBlocking { service.returning("any-1", running) } }
                .withMessageContaining(AnyReturner::class.java.name + ".returning(String, Object, Continuation)"
                    + " returned a java.util.concurrent.CompletableFuture")
                .withMessageContaining("Await it inside the suspend function")
            val deferred = CompletableDeferred<String>()
            assertThatExceptionOfType(IllegalStateException::class.java)
                .isThrownBy { runBlocking { service.returning("any-1", deferred) } }
                .withMessageContaining("returned a " + deferred.javaClass.name)
                .withMessageContaining("Await it inside the suspend function")
            assertThat(locks.activeLocks().filter { it.holding() }.map { it.entity() }).doesNotContain("any-1")
            val done = CompletableFuture.completedFuture("done")
            assertThat(runBlocking { service.returning("any-1", done) }).isSameAs(done)
            // Spring streams a ResponseEntity's body after the function returned: late work there fails it too.
            val streamed = Flux.just("x")
            assertThatExceptionOfType(IllegalStateException::class.java)
                .isThrownBy { runBlocking { service.returning("any-1", ResponseEntity.ok(streamed)) } }
                .withMessageContaining("returned a " + ResponseEntity::class.java.name + " whose body is a "
                    + streamed.javaClass.name)
            assertThat(locks.activeLocks().filter { it.holding() }.map { it.entity() }).doesNotContain("any-1")
        }
        contextRunner.withBean(CallableReturner::class.java).run { context ->
            assertThatExceptionOfType(IllegalStateException::class.java)
                .isThrownBy { runBlocking { context.getBean(CallableReturner::class.java).returning("any-2") } }
                .withMessageContaining("Call it inside the suspend function and return its result")
                .withMessageNotContaining("Await it")
            assertThat(locks(context).activeLocks().filter { it.holding() }.map { it.entity() }).doesNotContain("any-2")
        }
    }

    @Controller
    class CallableReturner {
        @QueueLocked(entity = ["#id"])
        suspend fun returning(id: String): Any? = Callable { id }
    }

    @Service
    class AnyReturner {
        @QueueLocked(entity = ["#id"])
        suspend fun returning(id: String, work: Any): Any? = work
    }

    companion object {
        /** A context with the lock's auto-configuration on DynamoDB Local and a [CounterService]. */
        fun contextRunner(): ApplicationContextRunner = ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration::class.java,
                DynamoLockAutoConfiguration::class.java))
            .withPropertyValues(
                "dynamolock.table-name=$LOCK_TABLE",
                "dynamolock.dynamodb.endpoint=${LOCAL.endpoint()}",
                "dynamolock.dynamodb.region=us-east-1",
                "dynamolock.dynamodb.access-key-id=local",
                "dynamolock.dynamodb.secret-access-key=local",
                "dynamolock.poll-interval.min=10ms",
                "dynamolock.poll-interval.max=100ms",
                "counter.table=$COUNTER_TABLE")
            .withBean(CounterService::class.java)

        val LOCAL: DynamoDbLocal = DynamoDbLocal.shared()
        val LOCK_TABLE: String = LOCAL.newLockTable()
        val COUNTER_TABLE: String = "kotlin-counters-" + UUID.randomUUID().toString().substring(0, 8)

        init {
            LOCAL.client().use { client ->
                client.createTable {
                    it.tableName(COUNTER_TABLE).billingMode(BillingMode.PAY_PER_REQUEST)
                        .attributeDefinitions({ a -> a.attributeName("id").attributeType(ScalarAttributeType.S) })
                        .keySchema({ k -> k.attributeName("id").keyType(KeyType.HASH) })
                }
            }
        }
    }
}
