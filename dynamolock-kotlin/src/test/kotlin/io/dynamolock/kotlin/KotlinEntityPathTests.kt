package io.dynamolock.kotlin

import io.dynamolock.annotation.QueueLocked
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test

/**
 * Entity paths through Kotlin classes, which are final by default: SpEL reads their properties by Kotlin's own
 * names (through kotlin-reflect), whatever the Java getter is called, so the start-up check must not refuse them.
 */
class KotlinEntityPathTests {

    @JvmInline
    value class OrderId(val value: String)

    /** `id`'s getter is `getId-<hash>`: its type is a value class. */
    data class Order(val id: OrderId, val customer: String)

    /** `trackingNo`'s getter is `getTrackingNo$<module>`. */
    class Shipment(internal val trackingNo: String)

    /** `code`'s getter is named by hand. */
    class Sku(@get:JvmName("skuCode") val code: String)

    open class Orders {
        @QueueLocked(entity = ["#order.id"])
        open fun place(order: Order): String = "placed ${order.id.value}"

        @QueueLocked(entity = ["#shipment.trackingNo"])
        open fun ship(shipment: Shipment): String = "shipped ${shipment.trackingNo}"

        @QueueLocked(entity = ["#sku.code"])
        open fun stock(sku: Sku): String = "stocked ${sku.code}"
    }

    @Test
    fun propertiesWhoseGettersKotlinRenamedStartAndLock() {
        SuspendQueueLockedTests.contextRunner().withBean(Orders::class.java).run { context ->
            assertThat(context).hasNotFailed()
            val orders = context.getBean(Orders::class.java)
            assertThat(orders.place(Order(OrderId("o-1"), "ann"))).isEqualTo("placed o-1")
            assertThat(orders.ship(Shipment("t-1"))).isEqualTo("shipped t-1")
            assertThat(orders.stock(Sku("s-1"))).isEqualTo("stocked s-1")
        }
    }
}
