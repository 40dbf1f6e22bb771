package io.dynamolock.kotlin

import io.dynamolock.core.LockHandle
import io.dynamolock.core.LockOperations
import java.io.File
import java.lang.reflect.Proxy
import java.net.URLClassLoader
import java.util.concurrent.CompletableFuture
import kotlinx.coroutines.reactor.ReactorContext
import kotlinx.coroutines.runBlocking
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.junit.jupiter.api.Test
import reactor.util.context.Context

/**
 * Micrometer is optional for this module: withLock, with a ReactorContext that has something under Micrometer's key,
 * runs in a class loader without micrometer-observation (the test class path has it, through Spring).
 */
class WithLockWithoutMicrometerTests {

    @Test
    fun withLockRunsWithoutMicrometerObservationOnTheClassPath() {
        val classPath = System.getProperty("surefire.test.class.path") ?: System.getProperty("java.class.path")
        val urls = classPath.split(File.pathSeparator)
            .filter { it.isNotEmpty() && !File(it).name.startsWith("micrometer-observation") }
            .map { File(it).toURI().toURL() }
        URLClassLoader(urls.toTypedArray(), ClassLoader.getPlatformClassLoader()).use { loader ->
            assertThatThrownBy { Class.forName("io.micrometer.observation.Observation", false, loader) }
                .isInstanceOf(ClassNotFoundException::class.java)
            assertThat(loader.loadClass(WithoutMicrometerProbe::class.java.name).getMethod("run").invoke(null))
                .isEqualTo("ran")
        }
    }
}

/** Run in the class loader without Micrometer: withLock over a LockOperations that grants at once. */
object WithoutMicrometerProbe {

    @JvmStatic
    fun run(): String {
        val lock = proxy(LockHandle::class.java) { name ->
            when (name) {
                "isValid" -> true
                "wasLost" -> false
                "fencingToken" -> 1L
                "whenLost" -> CompletableFuture<LockHandle>()
                "releaseAsync" -> CompletableFuture.completedFuture(null)
                else -> null
            }
        }
        val locks = proxy(LockOperations::class.java) { name ->
            if (name == "acquireAsync") CompletableFuture.completedFuture(lock) else null
        }
        return runBlocking(ReactorContext(Context.of("micrometer.observation", "not an observation"))) {
            locks.withLock("no-micrometer") { "ran" }
        }
    }

    private fun <T> proxy(type: Class<T>, answer: (String) -> Any?): T =
        type.cast(Proxy.newProxyInstance(type.classLoader, arrayOf(type)) { _, method, _ -> answer(method.name) })
}
