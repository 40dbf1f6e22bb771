package io.dynamolock.kotlin

import io.dynamolock.annotation.QueueLocked
import io.dynamolock.autoconfigure.DynamoLockAutoConfiguration
import java.io.File
import java.net.URLClassLoader
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Deferred
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.junit.jupiter.api.Test
import org.springframework.boot.autoconfigure.AutoConfigurations
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration
import org.springframework.boot.test.context.runner.ApplicationContextRunner
import org.springframework.stereotype.Service

/**
 * An application without kotlinx-coroutines-reactor (the test class path has it): Spring then neither calls a
 * suspend function through a `Mono` nor knows a `Flow` or a `Deferred` as reactive types, so a `@QueueLocked`
 * method returning one would be locked only while it creates the flow or starts the work. Such methods stop the
 * start, naming the method, its return type and the fix. Each application runs in a class loader of its own, made
 * from the class path without the hidden jars.
 */
class WithoutCoroutinesReactorTests {

    @Test
    fun withReactorCoreButWithoutKotlinxCoroutinesReactorAFlowADeferredAndASuspendFunctionFailTheStart() {
        val failure = startupFailure("kotlinx-coroutines-reactor")
        assertRefusesAll(failure)
    }

    @Test
    fun withoutReactorCoreAFlowADeferredAndASuspendFunctionFailTheStart() {
        val failure = startupFailure("kotlinx-coroutines-reactor", "reactor-core")
        assertRefusesAll(failure)
    }

    private fun assertRefusesAll(failure: String?) {
        assertThat(failure).contains("3 @QueueLocked methods are declared wrongly")
            .contains("@QueueLocked on ${Replays::class.java.name}.replay(String): returns a Kotlin Flow"
                + " (kotlinx.coroutines.flow.Flow), which @QueueLocked holds while it is collected only with"
                + " kotlinx-coroutines-reactor on the class path")
            .contains("Add org.jetbrains.kotlinx:kotlinx-coroutines-reactor")
            .contains("@QueueLocked on ${Later::class.java.name}.later(String): returns kotlinx.coroutines.Deferred,"
                + " whose work goes on after the method returns")
            .contains("make it a suspend function, with kotlinx-coroutines-reactor on the class path, or take the"
                + " lock inside the coroutine with withLock (io.dynamolock:dynamolock-kotlin)")
            .contains("@QueueLocked on ${Suspending::class.java.name}.next(String, Continuation): is a Kotlin suspend"
                + " function, which needs reactor-core and kotlinx-coroutines-reactor on the class path")
    }

    /** The start-up failure's message of [WithoutCoroutinesReactorProbe]'s application, without [hiddenJars]. */
    private fun startupFailure(vararg hiddenJars: String): String? {
        val classPath = System.getProperty("surefire.test.class.path") ?: System.getProperty("java.class.path")
        val urls = classPath.split(File.pathSeparator)
            .filter { entry -> entry.isNotEmpty() && hiddenJars.none { File(entry).name.startsWith("$it-") } }
            .map { File(it).toURI().toURL() }
        val endpoint = SuspendQueueLockedTests.LOCAL.endpoint().toString() // started here, not in the other loader
        return URLClassLoader(urls.toTypedArray(), ClassLoader.getPlatformClassLoader()).use { loader ->
            assertThatThrownBy { Class.forName("kotlinx.coroutines.reactor.MonoKt", false, loader) }
                .isInstanceOf(ClassNotFoundException::class.java)
            val thread = Thread.currentThread()
            val previous = thread.contextClassLoader
            thread.contextClassLoader = loader
            try {
                loader.loadClass(WithoutCoroutinesReactorProbe::class.java.name)
                    .getMethod("startupFailure", String::class.java, String::class.java)
                    .invoke(null, endpoint, SuspendQueueLockedTests.LOCK_TABLE) as String?
            } finally {
                thread.contextClassLoader = previous
            }
        }
    }

    @Service
    class Replays {
        @QueueLocked(entity = ["#orderId"])
        fun replay(orderId: String): Flow<Int> = flow { emit(1) }
    }

    @Service
    class Later {
        @QueueLocked(entity = ["#orderId"])
        fun later(orderId: String): Deferred<Int> = CompletableDeferred(1)
    }

    @Service
    class Suspending {
        @QueueLocked(entity = ["#orderId"])
        suspend fun next(orderId: String): Int = 1
    }
}

/** Run in the class loader without kotlinx-coroutines-reactor: starts an application with the locked methods. */
object WithoutCoroutinesReactorProbe {

    @JvmStatic
    fun startupFailure(endpoint: String, table: String): String? {
        var failure: String? = null
        ApplicationContextRunner()
            .withClassLoader(javaClass.classLoader)
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration::class.java,
                DynamoLockAutoConfiguration::class.java))
            .withPropertyValues(
                "dynamolock.table-name=$table",
                "dynamolock.dynamodb.endpoint=$endpoint",
                "dynamolock.dynamodb.region=us-east-1",
                "dynamolock.dynamodb.access-key-id=local",
                "dynamolock.dynamodb.secret-access-key=local")
            .withBean(WithoutCoroutinesReactorTests.Replays::class.java)
            .withBean(WithoutCoroutinesReactorTests.Later::class.java)
            .withBean(WithoutCoroutinesReactorTests.Suspending::class.java)
            .run { context -> failure = context.startupFailure?.message }
        return failure
    }
}
