package io.dynamolock.kotlin

import io.dynamolock.annotation.QueueLocked
import io.dynamolock.annotation.QueueLockedConfigurationException
import io.dynamolock.annotation.WaitTimeoutPolicy
import java.util.concurrent.CompletableFuture
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test
import org.springframework.http.ResponseEntity
import reactor.core.publisher.Flux

/** Start-up checks of `@QueueLocked` suspend functions: their Continuation is no parameter an entity can name (Spring drops it from #pN). */
class SuspendQueueLockedValidationTests {

    open class PastTheLast {
        @QueueLocked(entity = ["#p1"])
        open suspend fun run(orderId: String): String = "ran $orderId"
    }

    open class FarPastTheLast {
        @QueueLocked(entity = ["#p2"])
        open suspend fun run(orderId: String): String = "ran $orderId"
    }

    @Test
    fun p1OnASuspendFunctionOfOneParameterFailsTheStart() {
        SuspendQueueLockedTests.contextRunner().withBean(PastTheLast::class.java).run { context ->
            assertThat(context.startupFailure).isInstanceOf(QueueLockedConfigurationException::class.java)
                .hasMessageContaining("refers to #p1, but the method has 1 parameter: #p0 (orderId)")
        }
    }

    @Test
    fun p2OnASuspendFunctionOfOneParameterFailsTheStartNamingTheMethod() {
        SuspendQueueLockedTests.contextRunner().withBean(FarPastTheLast::class.java).run { context ->
            assertThat(context.startupFailure).isInstanceOf(QueueLockedConfigurationException::class.java)
                .hasMessageContaining("refers to #p2, but the method has 1 parameter: #p0 (orderId)")
        }
    }
    open class EntityOfFlux {
        @QueueLocked(entity = ["#id"])
        open suspend fun run(id: String): ResponseEntity<Flux<String>> = ResponseEntity.ok(Flux.just(id))
    }

    open class EntityOfText {
        @QueueLocked(entity = ["#id"])
        open suspend fun run(id: String): ResponseEntity<String> = ResponseEntity.ok(id)
    }

    open class Future {
        @QueueLocked(entity = ["#id"])
        open suspend fun run(id: String): CompletableFuture<String> = CompletableFuture.completedFuture(id)
    }

    /** Called as a Mono of its result, which Spring hands on as it is: a future's work goes on after the release. */
    @Test
    fun aSuspendFunctionReturningAFutureFailsTheStart() {
        SuspendQueueLockedTests.contextRunner().withBean(Future::class.java).run { context ->
            assertThat(context.startupFailure).isInstanceOf(QueueLockedConfigurationException::class.java)
                .hasMessageContaining("returns suspend function's java.util.concurrent.CompletableFuture, whose work"
                    + " goes on after the method returns")
        }
    }

    /** Called as a Mono of its result: a ResponseEntity whose body WebFlux streams after the release is refused. */
    @Test
    fun aSuspendFunctionReturningAResponseEntityOfAFluxFailsTheStart() {
        SuspendQueueLockedTests.contextRunner().withBean(EntityOfFlux::class.java).run { context ->
            assertThat(context.startupFailure).isInstanceOf(QueueLockedConfigurationException::class.java)
                .hasMessageContaining("returns suspend function's org.springframework.http.ResponseEntity of"
                    + " reactor.core.publisher.Flux, whose work goes on after the method returns")
        }
        SuspendQueueLockedTests.contextRunner().withBean(EntityOfText::class.java).run { context ->
            assertThat(context).hasNotFailed()
        }
    }

    abstract class Handler<R> {
        @QueueLocked(entity = ["#id"], onWaitTimeout = WaitTimeoutPolicy.SKIP)
        open suspend fun handle(id: String): R = work(id)

        abstract fun work(id: String): R
    }

    open class UnitHandler : Handler<Unit>() {
        override fun work(id: String) {}
    }

    abstract class Streaming<B : Any> {
        @QueueLocked(entity = ["#id"])
        open suspend fun get(id: String): ResponseEntity<B> = ResponseEntity.ok(body(id))

        abstract fun body(id: String): B
    }

    open class FluxStreaming : Streaming<Flux<String>>() {
        override fun body(id: String): Flux<String> = Flux.just(id)
    }

    /** A class type variable is what the bean's class makes it: R that it makes Unit returns nothing, so it may skip. */
    @Test
    fun skipsWithAClassTypeVariableTheBeanResolvesToUnit() {
        SuspendQueueLockedTests.contextRunner().withBean(UnitHandler::class.java).run { context ->
            assertThat(context).hasNotFailed()
        }
    }

    /** A ResponseEntity of B that the bean's class makes a Flux is refused at the start, as a declared one is. */
    @Test
    fun aSuspendFunctionReturningAResponseEntityOfAFluxThroughAClassTypeVariableFailsTheStart() {
        SuspendQueueLockedTests.contextRunner().withBean(FluxStreaming::class.java).run { context ->
            assertThat(context.startupFailure).isInstanceOf(QueueLockedConfigurationException::class.java)
                .hasMessageContaining(FluxStreaming::class.java.name + ".get(String, Continuation): returns suspend"
                    + " function's org.springframework.http.ResponseEntity of reactor.core.publisher.Flux, whose work"
                    + " goes on after the method returns")
        }
    }
}
