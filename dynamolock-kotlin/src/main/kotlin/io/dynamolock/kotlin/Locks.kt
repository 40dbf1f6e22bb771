/**
 * Coroutines for dynamolock: [withLock] waits for a lock without blocking a thread and runs a block holding it,
 * with the lock's [LockScope] in the coroutine context, so nested [withLock] calls (and, with
 * kotlinx-coroutines-reactor, `@QueueLocked` suspend functions and `ReactiveLockTemplate`) called from the block
 * join it; [locked] does the same for each collection of a `Flow`.
 */
package io.dynamolock.kotlin

import io.dynamolock.core.LockHandle
import io.dynamolock.core.LockLostException
import io.dynamolock.core.LockOperations
import io.dynamolock.core.LockRequest
import io.dynamolock.core.LockScope
import java.time.Duration
import java.util.Collections
import java.util.IdentityHashMap
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CompletionStage
import java.util.concurrent.ConcurrentHashMap
import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.EmptyCoroutineContext
import kotlin.coroutines.coroutineContext
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.ThreadContextElement
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.emitAll
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.flowOn
import kotlinx.coroutines.future.await
import kotlinx.coroutines.job
import kotlinx.coroutines.withContext

/**
 * The locks a coroutine runs inside: its lexical [LockScope], carried in the coroutine context instead of a
 * thread, so that a nested [withLock] for the same lock joins it, whatever thread the coroutine resumes on.
 */
class CoroutineLockScope(val scope: LockScope) : AbstractCoroutineContextElement(Key) {
    companion object Key : CoroutineContext.Key<CoroutineLockScope>
}

/**
 * This scope as a coroutine context, for a blocking bridge into coroutines inside a blocking hold (an `execute`
 * callback, a `@QueueLocked` method): `withLock` and `@QueueLocked` suspend functions called under it join the
 * locks it holds. A coroutine does not join what its thread holds, since an unrelated one may run there (one on
 * `Dispatchers.Unconfined` resumed inside the callback); without this, such a call queues behind the hold that
 * waits for it.
 *
 * ```
 * locks.execute<Reservation, RuntimeException>(request) {
 *     runBlocking(locks.currentScope().asCoroutineContext()) { orders.reserve(orderId) }
 * }
 * ```
 * It replaces a `ReactorContext` of the coroutine it is added to: meant for `runBlocking`, not `withContext`.
 */
fun LockScope.asCoroutineContext(): CoroutineContext {
    val element = CoroutineLockScope(this)
    return if (ReactorScopes.present) element + ReactorScopes.element(EmptyCoroutineContext, this) else element
}

/**
 * Runs [block] holding the lock on [entity], handing it the lock's handle (for its fencing token), (in [namespace], or the default), waiting at most [wait] (or the
 * default), and releases it however the block ends.
 *
 * ```
 * locks.withLock("order-42") { lock -> orders.addItem("order-42", item, lock.fencingToken()) }
 * ```
 * @see withLock
 */
suspend fun <T> LockOperations.withLock(
    entity: String,
    namespace: String? = null,
    wait: Duration? = null,
    block: suspend (LockHandle) -> T,
): T = withLock(request(entity, namespace, wait), block)

/**
 * Runs [block] holding the lock [request] asks for, and releases it however the block ends.
 *
 * - **Waiting** suspends: the core's `acquireAsync` holds no thread while it waits. A wait that runs out throws
 *   `LockWaitTimeoutException`.
 * - **Cancelled while waiting** (the coroutine's job, `withTimeout`): the acquisition's future is cancelled, so
 *   the entry leaves the queue; a grant racing the cancel is released by the core.
 * - **Re-entry** is lexical: inside [block] the coroutine context carries the lock's scope ([CoroutineLockScope],
 *   and the `ReactorContext` when kotlinx-coroutines-reactor is present), so a nested `withLock` of the same lock,
 *   a `@QueueLocked` suspend function or a `ReactiveLockTemplate` call joins it; other coroutines queue.
 * - **Lease lost** while the block runs: the block is cancelled and `LockLostException` thrown (also when the
 *   loss is only seen once the block has returned, or by the release); an exception of the block gets the loss as
 *   suppressed.
 * - **Release** is one DynamoDB request, sent on the template's own threads (`LockHandle.releaseAsync`, awaited
 *   without blocking a thread) and not cancellable, once every suspend function
 *   the block called through a Spring proxy (a coroutine without a parent) and every `@QueueLocked` call it made
 *   has ended, also after the block was cancelled or gave up on them; a child the block detached carries the
 *   lock's scope, and its proxied calls count too (README, "Cancellation"). Only coroutines are waited for: a future
 *   or a publisher the block awaits (`future.await()`, `mono.awaitSingle()`) is given up on at once when the block is
 *   cancelled, and a blocking step behind it (a JDBC call on a pool thread) runs on beside the next holder. Do such
 *   steps in `withContext(Dispatchers.IO)`, or guard their writes with the lock's fencing token.
 */
suspend fun <T> LockOperations.withLock(request: LockRequest, block: suspend (LockHandle) -> T): T {
    val scope = currentLockScope()
    val lock = awaitGrant(request, scope)
    val coroutines = BlockCoroutines()
    return holding(lock, coroutines, WITH_LOCK) {
        withContext(lockScopeElements(scope.with(lock), coroutines) + coroutines) { guarded(lock, WITH_LOCK, block) }
    }
}

/**
 * This flow, each of its collections holding the lock on [entity] (in [namespace], or the default), waiting at most
 * [wait] (or the default).
 *
 * @see locked
 */
fun <T> Flow<T>.locked(
    locks: LockOperations,
    entity: String,
    namespace: String? = null,
    wait: Duration? = null,
): Flow<T> = locked(locks, request(entity, namespace, wait))

/**
 * This flow, each of its collections holding the lock [request] asks for: the collection waits for the grant as
 * [withLock] does, collects this flow with the lock's scope in its context (a `withLock`, `@QueueLocked` suspend
 * function or `ReactiveLockTemplate` call in it joins the lock), passes every element on in the collector's own
 * coroutine and context (no buffer: the lock is held until the collector has taken the last one), and releases the
 * lock however the collection ends: completed, failed, cancelled, or stopped early by `first()` or `take()`. A lease
 * lost meanwhile cancels the collection and throws `LockLostException`.
 *
 * `flow { locks.withLock(id) { upstream.collect { emit(it) } } }` cannot do this: a flow may emit only from the
 * coroutine and context it is collected in, and `withLock` runs its block with the lock's scope added to the context.
 *
 * ```
 * fun replay(orderId: String): Flow<Event> = events.of(orderId).locked(locks, orderId)
 * ```
 */
fun <T> Flow<T>.locked(locks: LockOperations, request: LockRequest): Flow<T> {
    val upstream = this
    return flow {
        val scope = currentLockScope()
        val lock = locks.awaitGrant(request, scope)
        val coroutines = BlockCoroutines()
        holding(lock, coroutines, LOCKED_FLOW) {
            // flowOn without a dispatcher collects upstream in the lock's context and emits in the collector's.
            guarded(lock, LOCKED_FLOW) {
                emitAll(upstream.flowOn(lockScopeElements(scope.with(lock), coroutines) + coroutines))
            }
        }
    }
}

private fun request(entity: String, namespace: String?, wait: Duration?): LockRequest {
    val request = LockRequest.builder(entity)
    namespace?.let { request.namespace(it) }
    wait?.let { request.wait(it) }
    return request.build()
}

/**
 * Waits for the lock without blocking a thread; a cancel as the grant comes in gives the lock back. Not named
 * `acquire`: a member of that signature, blocking, would win over this extension without a word.
 */
private suspend fun LockOperations.awaitGrant(request: LockRequest, scope: LockScope): LockHandle {
    // Asked for inside the observation of the coroutine's ReactorContext (WebFlux's request), so that the lock's
    // observations are in its trace; the acquisition's start (onAcquiring) is reported on this thread, in this call.
    val acquisition = ReactorObservation.around(coroutineContext) { acquireAsync(request, scope) }
    return try {
        acquisition.await()
    } catch (ex: CancellationException) {
        // Cancelled as the grant came in: await() cancels promptly and drops the handle of a future that completed
        // meanwhile, which the core then never hears of. Give the lock back.
        if (acquisition.isDone && !acquisition.isCompletedExceptionally) {
            withContext(NonCancellable) { acquisition.join().releaseAsync().await() }
        }
        throw ex
    }
}

/**
 * Runs [work] holding [lock], then releases it, once the coroutines [coroutines] saw have ended, however [work] ended;
 * a loss found by the release fails the call, or is added to the exception [work] failed with.
 */
private suspend inline fun <T> holding(lock: LockHandle, coroutines: BlockCoroutines, what: String, work: () -> T): T {
    val result = try {
        work()
    } catch (ex: Throwable) {
        // Cancelled or failed, the work ends at once; a proxied call it made may still be in a blocking step.
        withContext(NonCancellable) {
            coroutines.awaitEnd()
            lock.releaseAsync().await()
        }
        // A loss cancels the work (also once it has returned, while its scope waits for its children): reported as
        // the loss. The work ran: a loss before the grant of a lock it asked for must not reach our caller as "not
        // granted".
        if (ex is CancellationException && lock.wasLost()) throw lost(lock, what)
        throw LockLostException.escapingWork(ex).also { addLoss(it, lock, what) }
    }
    // Released on the template's own threads, awaited without a thread: not on Dispatchers.IO, which the
    // application's blocking work may fill while a finished block keeps its lock.
    withContext(NonCancellable) {
        coroutines.awaitEnd() // a proxied call the work gave up on (a time-out, a cancelled child) may run on
        lock.releaseAsync().await()
    }
    // The release may find the entry gone before any heartbeat told us (broken, or purged after the lease).
    if (lock.wasLost()) throw lost(lock, what)
    return result
}

/**
 * The coroutines without a parent that run with a [withLock] block's context: those of the suspend functions it
 * calls through Spring proxies, which Spring runs as coroutines without a parent (so the block's structured concurrency
 * does not wait for them), in the caller's context, where this element rides along. Coroutine cancellation is
 * cooperative: one in a blocking step (`withContext(Dispatchers.IO) { jdbc }`) runs on after the block has ended,
 * cancelled or not (it may have given up on the call), so the block gives its lock back only once they have all
 * ended. A `@QueueLocked` call is also reported when it is subscribed ([track], through the Reactor context),
 * since its coroutine may start only after the block was cancelled, and then runs its first segment anyway.
 */
private class BlockCoroutines : ThreadContextElement<Unit>, AbstractCoroutineContextElement(Key) {
    companion object Key : CoroutineContext.Key<BlockCoroutines>

    private val running: MutableSet<Job> = ConcurrentHashMap.newKeySet()
    private val calls: MutableSet<CompletableFuture<*>> = ConcurrentHashMap.newKeySet()

    @OptIn(ExperimentalCoroutinesApi::class)
    override fun updateThreadContext(context: CoroutineContext) {
        val job = context[Job] ?: return
        // Only coroutines without a parent, as Spring runs proxied calls: their children end before them, the
        // block's are waited for by structured concurrency, and one with a parent elsewhere (an application scope,
        // a Job() of its own) was detached from the block on purpose.
        if (job.parent == null && running.add(job)) job.invokeOnCompletion { running.remove(job) }
    }

    override fun restoreThreadContext(context: CoroutineContext, oldState: Unit) {
        // Nothing set on the thread.
    }

    /** A proxied `@QueueLocked` call made in the block: [ended] completes once it has ended. */
    fun track(ended: CompletionStage<*>) {
        val call = ended.toCompletableFuture()
        if (calls.add(call)) call.whenComplete { _, _ -> calls.remove(call) }
    }

    suspend fun awaitEnd() {
        // A call waited for may start coroutines of its own, seen meanwhile: look until nothing is left.
        while (true) {
            val pendingCalls = calls.filter { !it.isDone }
            val pendingJobs = running.filter { !it.isCompleted }
            if (pendingCalls.isEmpty() && pendingJobs.isEmpty()) return
            pendingCalls.forEach { runCatching { it.await() } }
            pendingJobs.forEach { it.join() }
        }
    }
}

/**
 * Runs [block], cancelling it when the lease of [lock] is lost, and reports that loss as [LockLostException] (an
 * exception of the block gets it in [holding], after the release, which may find it too). Asked of
 * `wasLost()`, as `LockTemplate.execute` asks, not of `isValid`, which a block that released early has turned false
 * too. The block runs in this coroutine (a scope, not a child of its own), so a flow may emit from it.
 */
private suspend fun <T> guarded(lock: LockHandle, what: String, block: suspend (LockHandle) -> T): T = coroutineScope {
    val body = coroutineContext.job
    // whenLost, not onLost: the cancel must not wait behind user callbacks of other locks that block.
    lock.whenLost().thenRun { body.cancel(CancellationException("The lease of the lock was lost")) }
    val result = try {
        // Lost (or run out on the clock) before the block's turn: none of its code runs. The cancel above would stop
        // it only at its first suspension, after a blocking write at its start.
        if (!lock.isValid) throw lost(lock, what)
        block(lock)
    } catch (ex: CancellationException) {
        throw if (lock.wasLost()) lost(lock, what) else ex
    }
    if (lock.wasLost()) throw lost(lock, what)
    result
}

/**
 * Adds the loss of [lock], seen while the work ran or found by its release, to [thrown] as suppressed, as
 * `LockTemplate.execute` adds it to its callback's exception: the caller keeps the exception it is written to handle,
 * and is told the work was not protected. Only here, after the release: a loss added as the block failed would be
 * lost with the exception kotlinx's stack trace recovery (debug mode, as under `-ea`) replaces by a copy on its way
 * out of the block's scope. Not to a cancellation (the caller gave up), nor again to an exception that carries the loss
 * of [lock]; the loss of another lock (a nested block's, of another entity) does not count: this one is added to it.
 */
private fun addLoss(thrown: Throwable, lock: LockHandle, what: String) {
    if (lock.wasLost() && thrown !is CancellationException && !carriesTheLossOf(lock, thrown)) {
        thrown.addSuppressed(lost(lock, what))
    }
}

/**
 * Whether [thrown], or an exception it was made from, is or carries the loss of [lock] already
 * ([LockLostException.isLossOf]): the loss itself, or one a nested call that joined the lock added. Causes count, since
 * a recovered copy (see [addLoss]) has the original as its cause.
 */
private fun carriesTheLossOf(lock: LockHandle, thrown: Throwable): Boolean {
    val seen = Collections.newSetFromMap(IdentityHashMap<Throwable, Boolean>())
    var next: Throwable? = thrown
    while (next != null && seen.add(next)) {
        if (next.isLossOf(lock) || next.suppressed.any { it.isLossOf(lock) }) return true
        next = next.cause
    }
    return false
}

/** The scope the calling coroutine runs in: from its Reactor context, else from [CoroutineLockScope]. */
private suspend fun currentLockScope(): LockScope =
    // The Reactor context first: withLock writes one scope to both, but a @QueueLocked suspend function called inside
    // withLock runs with the caller's CoroutineLockScope and only its Reactor context holds the function's own lock.
    (if (ReactorScopes.present) ReactorScopes.scope(coroutineContext) else null)
        ?: coroutineContext[CoroutineLockScope]?.scope
        ?: LockScope.empty()

private suspend fun lockScopeElements(scope: LockScope, coroutines: BlockCoroutines): CoroutineContext {
    val element = CoroutineLockScope(scope)
    return if (ReactorScopes.present) element + ReactorScopes.element(coroutineContext, scope, coroutines::track)
    else element
}

/** What ran under the lock, as a loss names it. */
private const val WITH_LOCK = "the block of withLock"
private const val LOCKED_FLOW = "the collection of a locked flow"

private fun lost(lock: LockHandle, what: String) = LockLostException.whileRunning(lock, what)

private fun Throwable.isLossOf(lock: LockHandle) = this is LockLostException && isLossOf(lock)
