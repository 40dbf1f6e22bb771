package io.dynamolock.kotlin

import io.dynamolock.core.LockScope
import java.util.concurrent.CompletionStage
import java.util.function.Consumer
import kotlin.coroutines.CoroutineContext
import kotlinx.coroutines.reactor.ReactorContext
import reactor.util.context.Context

/**
 * The lock scope in a coroutine's `ReactorContext`, where Spring's coroutine bridge and `ReactiveLockTemplate`
 * carry it (under the key `LockScope::class.java`). Only touched when kotlinx-coroutines-reactor is on the class
 * path, so that `withLock` works without it.
 */
internal object ReactorScopes {

    // A native image finds these by name only with hints: the starter's ReactiveRuntimeHints registers them.
    val present: Boolean = classesPresent("kotlinx.coroutines.reactor.ReactorContext", "reactor.util.context.Context")

    /** Whether every one of [names] can be loaded here, without initialising any: optional dependencies. */
    fun classesPresent(vararg names: String): Boolean = try {
        names.forEach { Class.forName(it, false, ReactorScopes::class.java.classLoader) }
        true
    } catch (absent: ClassNotFoundException) {
        false
    } catch (absent: LinkageError) {
        false
    }

    fun scope(context: CoroutineContext): LockScope? =
        context[ReactorContext]?.context?.getOrDefault<LockScope>(LockScope::class.java, null)

    /** What the coroutine's `ReactorContext` holds under [key], if anything. */
    fun get(context: CoroutineContext, key: Any): Any? = context[ReactorContext]?.context?.getOrDefault<Any>(key, null)

    /**
     * Where `@QueueLocked` suspend calls report themselves to the `withLock` block they are made in, as a
     * `Consumer<CompletionStage<*>>` (the same key as dynamolock's `CoroutineBody.PENDING_CALLS`, which this module
     * cannot see: a key spelled differently fails
     * `SuspendQueueLockedTests.aWithLockCancelledAsItsProxiedCallsCoroutineStartsKeepsItsLockUntilThatCoroutineHasEnded`).
     */
    const val PENDING_CALLS = "io.dynamolock.pendingCalls"

    fun element(context: CoroutineContext, scope: LockScope, pendingCalls: ((CompletionStage<*>) -> Unit)? = null):
        CoroutineContext {
        var reactor = (context[ReactorContext]?.context ?: Context.empty()).put(LockScope::class.java, scope)
        if (pendingCalls != null) {
            reactor = reactor.put(PENDING_CALLS, Consumer<CompletionStage<*>> { pendingCalls(it) })
        }
        return ReactorContext(reactor)
    }
}
