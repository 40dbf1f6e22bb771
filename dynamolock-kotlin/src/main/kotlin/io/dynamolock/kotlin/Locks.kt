package io.dynamolock.kotlin

import io.dynamolock.core.LockOperations
import io.dynamolock.core.LockRequest
import io.dynamolock.core.LockScope
import java.time.Duration
import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.coroutineContext
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.future.await
import kotlinx.coroutines.withContext

/**
 * The locks a coroutine runs inside: its lexical [LockScope], carried in the coroutine context instead of a
 * thread, so that a nested [withLock] for the same lock joins it, whatever thread the coroutine resumes on.
 */
class CoroutineLockScope(val scope: LockScope) : AbstractCoroutineContextElement(Key) {
    companion object Key : CoroutineContext.Key<CoroutineLockScope>
}

/**
 * Runs [block] holding the lock on [entity] (in [namespace], or the default), waiting at most [wait] (or the
 * default) without blocking a thread: the wait is the core's `acquireAsync`, awaited. Cancelling the coroutine
 * while it waits cancels the acquisition (its entry leaves the queue). The lock is released however [block] ends,
 * on [Dispatchers.IO], also when the coroutine is cancelled.
 */
suspend fun <T> LockOperations.withLock(
    entity: String,
    namespace: String? = null,
    wait: Duration? = null,
    block: suspend () -> T,
): T {
    val request = LockRequest.builder(entity)
    namespace?.let { request.namespace(it) }
    wait?.let { request.wait(it) }
    return withLock(request.build(), block)
}

/** As the other [withLock], for a [LockRequest]. */
suspend fun <T> LockOperations.withLock(request: LockRequest, block: suspend () -> T): T {
    val scope = coroutineContext[CoroutineLockScope]?.scope ?: LockScope.empty()
    val lock = acquireAsync(request, scope).await()
    try {
        return withContext(CoroutineLockScope(scope.with(lock))) { block() }
    } finally {
        withContext(NonCancellable + Dispatchers.IO) { lock.release() }
    }
}
