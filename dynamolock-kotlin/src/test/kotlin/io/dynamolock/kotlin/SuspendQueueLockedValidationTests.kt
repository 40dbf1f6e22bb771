package io.dynamolock.kotlin

import io.dynamolock.annotation.QueueLocked
import io.dynamolock.annotation.QueueLockedConfigurationException
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test

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
}
