package io.dynamolock.kotlin

import io.dynamolock.core.LockHandle
import io.dynamolock.core.LockLostException
import io.dynamolock.core.LockMode
import io.dynamolock.core.LockOperations
import io.dynamolock.core.LockRequest
import io.dynamolock.core.LockScope
import io.dynamolock.core.LockTemplate
import io.dynamolock.core.LockWaitTimeoutException
import io.dynamolock.core.test.Await
import io.dynamolock.core.test.LockFixture
import java.time.Duration
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicReference
import java.util.function.Consumer
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.async
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.coroutines.yield
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout

/**
 * `withLock` on a bare template (no Spring): cancellation racing the grant, losses found by the release, and losses of
 * locks of several entities.
 */
@Timeout(60)
class WithLockTests {

    private val fixture = LockFixture()

    @AfterEach
    fun tearDown() = fixture.close()

    /**
     * withLock's release resumed an Unconfined coroutine (as Spring WebFlux runs suspend handlers) inside
     * the removal lane's slot, so the caller's code after withLock held the lock's lane: 16 such callers kept every
     * other removal of the lock unsent.
     */
    @Test
    fun codeAfterWithLockOnAnUnconfinedCoroutineDoesNotHoldTheLocksRemovalLane() {
        val locks = fixture.template()
        val shared = LockRequest.builder("kt-lane").mode(LockMode.SHARED).build()
        val goOn = CountDownLatch(1)
        val inCodeAfter = AtomicInteger()
        val scope = CoroutineScope(Dispatchers.Unconfined)
        try {
            repeat(16) {
                scope.launch {
                    locks.withLock(shared) { "done" }
                    inCodeAfter.incrementAndGet()
                    goOn.await(60, TimeUnit.SECONDS) // the handler's next step, e.g. a blocking repository call
                }
            }
            Await.until(Duration.ofSeconds(20), "16 callers in their code after withLock") { inCodeAfter.get() == 16 }

            val seventeenth = runBlocking { withTimeoutOrNull(10_000) { locks.withLock(shared) { "17" } } }
            assertThat(seventeenth).`as`("a 17th withLock whose block returned at once has returned").isEqualTo("17")
            assertThat(fixture.queue("kt-lane")).`as`("every entry removed").isEmpty()
        } finally {
            goOn.countDown()
        }
    }

    /**
     * A block failing with the loss of a nested lock B was taken to carry its own lock A's loss already,
     * so A's loss, found by its release, was dropped; `LockTemplate.execute` adds it.
     */
    @Test
    fun theOuterLocksLossIsAddedToANestedLocksLoss() {
        val slow = fixture.template({ b -> b.leaseDuration(Duration.ofSeconds(60)).heartbeatInterval(Duration.ofSeconds(30)) })
        val other = fixture.template()
        val failure = runCatching {
            runBlocking {
                slow.withLock("kt-outer") { a ->
                    other.breakLock("kt-outer", null, a.fencingToken()) // another template: nothing tells ours
                    slow.withLock("kt-inner") { b -> other.breakLock("kt-inner", null, b.fencingToken()) }
                }
            }
        }.exceptionOrNull()
        assertThat(failure).isInstanceOf(LockLostException::class.java).hasMessageContaining("kt-inner")
        assertThat(failure!!.suppressed).`as`("the outer lock's loss, as LockTemplate.execute adds it").singleElement()
            .satisfies(Consumer { assertThat(it).isInstanceOf(LockLostException::class.java).hasMessageContaining("kt-outer") })
    }

    /**
     * A nested withLock of another lock loses its place while waiting: it was never granted, but the outer block ran
     * (and may have written), so the outer withLock's caller is told it was granted, the nested loss as the cause.
     */
    @Test
    fun aLossEscapingTheBlockOfAWithLockIsGrantedToItsCaller() {
        val locks = fixture.template()
        val other = fixture.template()
        val nested = AtomicReference<LockLostException>()
        other.acquire("kt-nest-b", Duration.ZERO).use {
            val failure = runBlocking {
                val outer = async {
                    runCatching {
                        locks.withLock("kt-nest-a") {
                            try {
                                locks.withLock("kt-nest-b", wait = Duration.ofSeconds(30)) { "never runs" }
                            } catch (lost: LockLostException) {
                                nested.set(lost)
                                throw lost
                            }
                        }
                    }.exceptionOrNull()
                }
                withContext(Dispatchers.IO) {
                    fixture.awaitQueueLength("kt-nest-b", 2)
                    other.breakLock("kt-nest-b", null, fixture.queue("kt-nest-b")[1].ticket())
                }
                outer.await()
            }
            assertThat(nested.get().wasGranted()).`as`("the nested wait itself").isFalse()
            assertThat(failure).isInstanceOfSatisfying(LockLostException::class.java) { lost ->
                assertThat(lost.wasGranted()).`as`("the outer block ran").isTrue()
                assertThat(lost).hasCause(nested.get())
            }
        }
    }

    /**
     * A coroutine on Dispatchers.Unconfined is resumed by whatever completes what it awaits, here inside another
     * caller's execute callback: running on that thread does not nest it in that hold, so its withLock queues and
     * runs after the holder, with a later fencing token.
     */
    @Test
    fun aCoroutineResumedInsideAnUnrelatedBlockingHoldDoesNotJoinIt() {
        val locks = fixture.template()
        val inCallback = AtomicBoolean()
        val ranBesideHolder = AtomicBoolean()
        val tokens = java.util.concurrent.CopyOnWriteArrayList<Long>()
        runBlocking {
            val signal = CompletableDeferred<Unit>()
            val waiter = launch(Dispatchers.Unconfined) {
                signal.await() // resumed on the holder's thread, inside its callback
                locks.withLock("unrelated-join", wait = Duration.ofSeconds(10)) {
                    if (inCallback.get()) ranBesideHolder.set(true)
                    tokens.add(it.fencingToken())
                }
            }
            withContext(Dispatchers.IO) {
                locks.execute<Unit, RuntimeException>(LockRequest.builder("unrelated-join").build()) { held ->
                    tokens.add(held.fencingToken())
                    inCallback.set(true)
                    signal.complete(Unit)
                    inCallback.set(false)
                }
            }
            waiter.join()
        }
        assertThat(ranBesideHolder.get()).`as`("the waiter's block ran while the other holder's callback ran").isFalse()
        assertThat(tokens[1]).`as`("the waiter's token against the holder's").isGreaterThan(tokens[0])
    }

    /** Hands out the future of each acquisition, so a test can wait for the grant itself. */
    private class Acquisitions(val locks: LockTemplate) : LockOperations by locks {
        val last = AtomicReference<CompletableFuture<LockHandle>>()
        override fun acquireAsync(request: LockRequest, scope: LockScope): CompletableFuture<LockHandle> =
            locks.acquireAsync(request, scope).also { last.set(it) }
    }

    @Test
    fun aCancelledBlockKeepsTheLockUntilItsBlockingStepHasEnded() {
        val locks = fixture.template()
        val inside = AtomicInteger()
        val overlap = AtomicBoolean()
        val entered = CompletableDeferred<Unit>()
        val mayFinish = CountDownLatch(1)
        // Cancellation is cooperative: a blocking step (JDBC in Dispatchers.IO) goes on after the cancel, so the
        // lock must be held until it ends, or a second caller runs beside it.
        suspend fun write(finish: CountDownLatch) = locks.withLock("cancel-blocking", wait = Duration.ofSeconds(2)) {
            if (inside.incrementAndGet() > 1) overlap.set(true)
            try {
                withContext(Dispatchers.IO) { entered.complete(Unit); finish.await() }
            } finally {
                inside.decrementAndGet()
            }
        }
        runBlocking(Dispatchers.Default) {
            val first = launch { write(mayFinish) }
            entered.await()
            first.cancel() // its block is still in the blocking step
            val second = runCatching { write(CountDownLatch(0)) } // granted beside it, or times out after 2 s
            assertThat(second.exceptionOrNull()).isInstanceOf(LockWaitTimeoutException::class.java)
            mayFinish.countDown()
            first.join()
        }
        assertThat(overlap.get()).isFalse()
        locks.tryAcquire("cancel-blocking").orElseThrow().release() // released once the block ended
    }

    @Test
    fun aCoroutineCancelledAsItsLockIsGrantedGivesTheLockBack() {
        val locks = Acquisitions(fixture.template())
        val holder = locks.acquire("grant-race", Duration.ofSeconds(5))
        lateinit var granted: LockHandle
        // One thread: the coroutine's resumption after the grant queues behind this block, so the cancel lands
        // between the grant and the resumption.
        runBlocking {
            val job = launch { locks.withLock("grant-race", wait = Duration.ofSeconds(30)) { "ran" } }
            yield() // the job runs until it waits for the lock
            val acquisition = locks.last.get()
            assertThat(acquisition.isDone).isFalse()
            holder.release()
            granted = acquisition.get(30, TimeUnit.SECONDS)
            job.cancel()
            job.join()
        }
        assertThat(granted.isValid).`as`("the lock granted to the cancelled coroutine is released").isFalse()
        assertThat(fixture.queue("grant-race")).isEmpty()
    }

    /** A block done with its lock may release it early, as `execute`'s callback may: that is no loss. */
    @Test
    fun aBlockThatReleasesItsLockEarlyReturnsItsResult() {
        val locks = fixture.template()
        val result = runBlocking {
            locks.withLock("early-release") { lock ->
                lock.release()
                "done"
            }
        }
        assertThat(result).isEqualTo("done")
        assertThat(fixture.queue("early-release")).isEmpty()
        val cancelled = runBlocking {
            runCatching {
                withTimeout(200) {
                    locks.withLock("early-release") { lock ->
                        lock.release()
                        awaitCancellation()
                    }
                }
            }.exceptionOrNull()
        }
        assertThat(cancelled).`as`("a cancel after an early release is a cancel")
            .isInstanceOf(TimeoutCancellationException::class.java)
    }

    /** A lock lost before its block's turn (broken at the grant): none of the block runs, the loss is thrown. */
    @Test
    fun aBlockWhoseLockWasLostBeforeItStartedDoesNotRun() {
        val locks = LostAtGrant(fixture.template())
        val ran = AtomicBoolean()
        val failure = runBlocking {
            runCatching { locks.withLock("lost-at-grant") { ran.set(true) } }.exceptionOrNull()
        }
        assertThat(failure).isInstanceOf(LockLostException::class.java).hasMessageContaining("lost-at-grant")
        assertThat(ran).`as`("the block ran with a lock already lost").isFalse()
    }

    @Test
    fun aLossFoundByTheReleaseFailsWithLockLostException() {
        val locks = unhearingTemplate()
        val failure = runBlocking {
            runCatching {
                locks.withLock("broken-unheard") { lock ->
                    fixture.template().breakLock("broken-unheard", null, lock.fencingToken())
                    "done"
                }
            }.exceptionOrNull()
        }
        assertThat(failure).isInstanceOf(LockLostException::class.java).hasMessageContaining("broken-unheard")
        assertThat(fixture.queue("broken-unheard")).isEmpty()
    }

    /**
     * The block fails after its lock was broken, and no heartbeat told ours: the loss the release finds is added to the
     * block's exception as suppressed, once, as `LockTemplate.execute` adds it to its callback's.
     */
    @Test
    fun aLossFoundByTheReleaseOfAFailedBlockIsAddedToItsException() {
        val failure = failingAfterAnUnheardBreak("broken-then-failed", IllegalStateException("block failed"))
        assertThat(failure).isInstanceOf(IllegalStateException::class.java).hasMessage("block failed")
        assertThat(failure.suppressed).singleElement().isInstanceOfSatisfying(LockLostException::class.java) {
            assertThat(it).hasMessageContaining("broken-then-failed").hasMessageContaining("withLock")
        }
        assertThat(fixture.queue("broken-then-failed")).isEmpty()
    }

    /** An exception that carries a loss already (a nested call joined the lock and reported it) gets no second. */
    @Test
    fun aFailedBlocksExceptionThatCarriesALossAlreadyGetsNoSecond() {
        val carrying = IllegalStateException("block failed")
        carrying.addSuppressed(LockLostException("reported by a nested call"))
        assertThat(lossesCarried(failingAfterAnUnheardBreak("broken-carrying", carrying))).isEqualTo(1)
    }

    /** A loss a heartbeat saw before the block failed is added once, though the release finds it again. */
    @Test
    fun aLossSeenBeforeTheBlockFailedIsAddedOnce() {
        val locks = fixture.template()
        val operator = fixture.template()
        val failure = runBlocking {
            runCatching {
                locks.withLock("lost-then-failed") { lock ->
                    operator.breakLock(lock.entity(), lock.namespace(), lock.fencingToken())
                    lock.whenLost().get(10, TimeUnit.SECONDS) // no suspension: the cancel cannot stop the block
                    throw IllegalStateException("block failed")
                }
            }.exceptionOrNull()
        }
        assertThat(failure).isInstanceOf(IllegalStateException::class.java)
        assertThat(failure!!.suppressed).singleElement().isInstanceOf(LockLostException::class.java)
        assertThat(lossesCarried(failure)).`as`("with the exception it was recovered from").isEqualTo(1)
    }

    /**
     * The losses [failure] carries as suppressed, also on its causes: under `-ea` kotlinx's stack trace recovery hands
     * a caller a copy of what the block threw, the original as its cause.
     */
    private fun lossesCarried(failure: Throwable): Int =
        generateSequence(failure) { it.cause }.take(10)
            .sumOf { cause -> cause.suppressed.count { it is LockLostException } }

    /** What withLock throws when its block throws [error] just after another template broke its lock. */
    private fun failingAfterAnUnheardBreak(entity: String, error: Throwable): Throwable {
        val locks = unhearingTemplate()
        val failure = runBlocking {
            runCatching {
                locks.withLock(entity) { lock ->
                    fixture.template().breakLock(entity, null, lock.fencingToken())
                    throw error
                }
            }.exceptionOrNull()
        }
        return checkNotNull(failure) { "withLock returned" }
    }

    /** No heartbeat during a block: only the release can find that the entry was broken. */
    private fun unhearingTemplate() = fixture.template(
        Consumer { it.leaseDuration(Duration.ofSeconds(60)).heartbeatInterval(Duration.ofSeconds(30)) },
    )

    @Test
    fun aLostLeaseOfALockOfSeveralEntitiesFailsWithLockLostExceptionNamingThemAll() {
        val locks = fixture.template()
        val failure = runBlocking {
            runCatching {
                withTimeout(30_000) {
                    locks.withLock(LockRequest.builder(listOf("multi-a", "multi-b")).build()) { lock ->
                        locks.breakLock("multi-b", null, lock.fencingTokens().getValue("multi-b"))
                        awaitCancellation()
                    }
                }
            }.exceptionOrNull()
        }
        assertThat(failure).isInstanceOf(LockLostException::class.java)
            .hasMessageContaining("multi-a', 'multi-b").hasMessageContaining("withLock")
    }

    /** The application's blocking work filling Dispatchers.IO does not keep a finished block's lock held. */
    @Test
    fun aFinishedBlockReleasesItsLockThoughTheApplicationsBlockingWorkFillsDispatchersIo() {
        val locks = fixture.template()
        val free = CountDownLatch(1)
        val threads = maxOf(64, Runtime.getRuntime().availableProcessors()) // Dispatchers.IO's default limit
        val busy = CountDownLatch(threads)
        val blockers = CoroutineScope(Dispatchers.IO)
        try {
            repeat(threads) {
                blockers.launch {
                    busy.countDown()
                    free.await() // the application's blocking call
                }
            }
            assertThat(busy.await(10, TimeUnit.SECONDS)).`as`("Dispatchers.IO is full").isTrue()
            // On a thread of its own: a release waiting for Dispatchers.IO cannot be cancelled, only outwaited.
            val call = CompletableFuture.supplyAsync { runBlocking { locks.withLock("kt-io-full") { "done" } } }
            assertThat(call.get(10, TimeUnit.SECONDS)).isEqualTo("done")
            assertThat(fixture.queue("kt-io-full")).isEmpty()
        } finally {
            free.countDown()
        }
    }

    /** Lost-lease callbacks of other locks that block every callback thread do not delay the cancel of a lost block. */
    @Test
    fun blockingCallbacksOfOtherLocksDoNotDelayTheCancelOfALostBlock() {
        val locks = fixture.template()
        val operator = fixture.template()
        val free = CountDownLatch(1)
        try {
            val blocking = CountDownLatch(4)
            repeat(8) { i -> // more than the template's callback threads
                val stuck = locks.acquire("kt-stuck-$i", Duration.ZERO)
                stuck.onLost {
                    blocking.countDown()
                    free.await()
                }
                operator.breakLock("kt-stuck-$i", null, stuck.fencingToken())
            }
            assertThat(blocking.await(10, TimeUnit.SECONDS)).`as`("every callback thread is blocked").isTrue()
            val failure = runBlocking {
                runCatching {
                    withTimeout(10_000) {
                        locks.withLock("kt-lost-block") { lock ->
                            operator.breakLock(lock.entity(), lock.namespace(), lock.fencingToken())
                            awaitCancellation()
                        }
                    }
                }.exceptionOrNull()
            }
            assertThat(failure).isInstanceOf(LockLostException::class.java).hasMessageContaining("kt-lost-block")
        } finally {
            free.countDown()
        }
    }
}

/** [locks], but each lock it grants is broken in this process first: the handle is lost when the caller gets it. */
internal class LostAtGrant(private val locks: LockTemplate) : LockOperations by locks {
    override fun acquireAsync(request: LockRequest, scope: LockScope): CompletableFuture<LockHandle> =
        locks.acquireAsync(request, scope).thenApply { lock ->
            locks.breakLock(lock.entity(), lock.namespace(), lock.fencingToken())
            check(lock.wasLost())
            lock
        }
}
