package io.dynamolock.samples.orders;

import io.dynamolock.annotation.QueueLocked;
import io.dynamolock.core.LockTemplate;
import java.time.Duration;
import org.springframework.stereotype.Service;

/**
 * Read-modify-write updates of orders. Each instance of the app may run them at once for the
 * same order; {@code @QueueLocked} makes them take turns in arrival order.
 */
@Service
public class OrderService {

    private final OrderRepository orders;
    private final LockTemplate locks;
    private final Duration workTime;

    public OrderService(OrderRepository orders, LockTemplate locks, SampleProperties properties) {
        this.orders = orders;
        this.locks = locks;
        this.workTime = properties.workTime();
    }

    public Order create(String orderId, String customer) {
        Order order = new Order(orderId, customer);
        orders.save(order);
        return order;
    }

    public Order get(String orderId) {
        return orders.find(orderId).orElseThrow(() -> new OrderNotFoundException(orderId));
    }

    /** The lock is taken before the order is read and released after it is written. */
    @QueueLocked(entity = "#orderId", maxWait = "60s")
    public Order addItem(String orderId, Item item) {
        return update(orderId, item);
    }

    /** The same update with no lock: concurrent calls overwrite each other. For the demo only. */
    public Order addItemWithoutLock(String orderId, Item item) {
        return update(orderId, item);
    }

    /** The programmatic way: the injected {@link LockTemplate}, with the fencing token at hand. */
    public Order applyDiscount(String orderId, int percent) {
        return locks.execute(orderId, Duration.ofSeconds(60), lock -> {
            Order order = get(orderId);
            order.setTotalCents(order.getTotalCents() * (100 - percent) / 100);
            order.setLastFencingToken(lock.fencingToken());
            orders.save(order);
            return order;
        });
    }

    private Order update(String orderId, Item item) {
        Order order = get(orderId);
        simulateWork();
        order.add(item);
        orders.save(order);
        return order;
    }

    private void simulateWork() {
        try {
            Thread.sleep(workTime.toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
