package io.dynamolock.kotlin

import io.dynamolock.core.LockLostException
import io.dynamolock.core.LockRequest
import io.dynamolock.core.test.LockFixture
import java.time.Duration
import java.util.concurrent.atomic.AtomicBoolean
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.flowOf
import kotlinx.coroutines.flow.onEach
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.yield
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout

/** [locked]: each collection of a flow holds the lock, on DynamoDB Local. */
@Timeout(60)
class LockedFlowTests {

    private val fixture = LockFixture()

    @AfterEach
    fun tearDown() = fixture.close()

    /**
     * The element is passed on while the lock is held (its entry is in the queue as the collector takes it), a
     * `withLock` in the flow joins the lock, and the collection's end releases it.
     */
    @Test
    fun eachCollectionHoldsTheLockUntilTheCollectorHasTakenTheLastElement() {
        val locks = fixture.template()
        val tokens = mutableListOf<Long>()
        val upstream = flow {
            emit(locks.withLock("flow-held") { it.fencingToken() })
            emit(locks.withLock("flow-held") { it.fencingToken() })
        }
        val queuedWhileCollected = mutableListOf<Int>()
        runBlocking {
            upstream.locked(locks, "flow-held").collect { token ->
                tokens += token
                queuedWhileCollected += fixture.queue("flow-held").size
            }
        }
        assertThat(tokens).hasSize(2).`as`("both nested withLock calls joined one hold").containsOnly(tokens[0])
        assertThat(queuedWhileCollected).containsExactly(1, 1)
        assertThat(fixture.queue("flow-held")).isEmpty()
    }

    /**
     * The same thing done by hand, `flow { withLock { upstream.collect { emit(it) } } }`, breaks the flow's rule
     * that it emits in its collector's coroutine and context; `locked` does not.
     */
    @Test
    fun aLockedFlowEmitsInItsCollectorsContext() {
        val locks = fixture.template()
        val collected = runBlocking { flowOf(1, 2, 3).locked(locks, "flow-context").toList() }
        assertThat(collected).containsExactly(1, 2, 3)
    }

    /** Two collections of one locked flow take turns: the second waits until the first has ended. */
    @Test
    fun twoCollectionsTakeTurns() {
        val locks = fixture.template()
        val firstHolds = CompletableDeferred<Unit>()
        val firstMayEnd = CompletableDeferred<Unit>()
        val events = mutableListOf<String>()
        runBlocking {
            val first = async {
                flow {
                    firstHolds.complete(Unit)
                    firstMayEnd.await()
                    emit("first")
                }.locked(locks, "flow-turns").collect { events += it }
            }
            firstHolds.await()
            val second = async {
                flowOf("second").locked(locks, "flow-turns", wait = Duration.ofSeconds(30)).collect { events += it }
            }
            // The second collection's entry is queued behind the first's before the first may end.
            while (fixture.queue("flow-turns").size < 2) yield()
            events += "second queued"
            firstMayEnd.complete(Unit)
            first.await()
            second.await()
        }
        assertThat(events).containsExactly("second queued", "first", "second")
        assertThat(fixture.queue("flow-turns")).isEmpty()
    }

    /** `first()` stops the collection early: the lock is released, and the element is the collector's. */
    @Test
    fun aCollectionStoppedEarlyReleasesTheLock() {
        val locks = fixture.template()
        val element = runBlocking {
            flow {
                emit("one")
                awaitCancellation()
            }.locked(locks, "flow-first").first()
        }
        assertThat(element).isEqualTo("one")
        assertThat(fixture.queue("flow-first")).isEmpty()
    }

    /** The collector's own exception reaches it as it is, and the lock is released. */
    @Test
    fun aCollectorsExceptionReachesItAsItIsAndTheLockIsReleased() {
        val locks = fixture.template()
        val failure = runBlocking {
            runCatching {
                flowOf(1).locked(locks, "flow-fails").onEach { throw IllegalStateException("collector's") }.toList()
            }.exceptionOrNull()
        }
        assertThat(failure).isInstanceOf(IllegalStateException::class.java).hasMessage("collector's")
        assertThat(fixture.queue("flow-fails")).isEmpty()
    }

    /** A lock lost before the collection's turn (broken at the grant): none of the flow runs, the loss is thrown. */
    @Test
    fun aFlowWhoseLockWasLostBeforeItsCollectionStartedDoesNotRun() {
        val locks = LostAtGrant(fixture.template())
        val ran = AtomicBoolean()
        val failure = runBlocking {
            runCatching {
                flow {
                    ran.set(true)
                    emit(1)
                }.locked(locks, "flow-lost-at-grant").toList()
            }.exceptionOrNull()
        }
        assertThat(failure).isInstanceOf(LockLostException::class.java)
        assertThat(ran).`as`("the flow ran with a lock already lost").isFalse()
    }

    /** A lease lost while the flow is collected cancels the collection and throws LockLostException. */
    @Test
    fun aLeaseLostWhileCollectedCancelsTheCollection() {
        val locks = fixture.template()
        val failure = runBlocking {
            runCatching {
                withTimeout(30_000) {
                    flow {
                        locks.breakLock("flow-lost", null, fixture.queue("flow-lost").single().ticket())
                        emit("after the break")
                        awaitCancellation()
                    }.locked(locks, LockRequest.of("flow-lost")).toList()
                }
            }.exceptionOrNull()
        }
        assertThat(failure).isInstanceOf(LockLostException::class.java).hasMessageContaining("flow-lost")
            .hasMessageContaining("the collection of a locked flow")
        assertThat((failure as LockLostException).wasGranted()).isTrue()
        assertThat(fixture.queue("flow-lost")).isEmpty()
    }
}
