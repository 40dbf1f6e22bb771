package io.dynamolock.kotlin

import io.dynamolock.core.LockScope
import kotlin.coroutines.CoroutineContext
import kotlinx.coroutines.reactor.ReactorContext
import reactor.util.context.Context

/**
 * The lock scope in a coroutine's `ReactorContext`, where Spring's coroutine bridge and `ReactiveLockTemplate`
 * carry it (under the key `LockScope::class.java`). Only touched when kotlinx-coroutines-reactor is on the class
 * path, so that `withLock` works without it.
 */
internal object ReactorScopes {

    val present: Boolean = try {
        Class.forName("kotlinx.coroutines.reactor.ReactorContext", false, ReactorScopes::class.java.classLoader)
        Class.forName("reactor.util.context.Context", false, ReactorScopes::class.java.classLoader)
        true
    } catch (absent: ClassNotFoundException) {
        false
    } catch (absent: LinkageError) {
        false
    }

    fun scope(context: CoroutineContext): LockScope? =
        context[ReactorContext]?.context?.getOrDefault<LockScope>(LockScope::class.java, null)

    fun element(context: CoroutineContext, scope: LockScope): CoroutineContext {
        val reactor = context[ReactorContext]?.context ?: Context.empty()
        return ReactorContext(reactor.put(LockScope::class.java, scope))
    }
}
