package io.dynamolock.samples.orders;

import io.dynamolock.annotation.QueueLocked;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockOperations;
import java.time.Duration;
import java.util.function.Consumer;
import org.springframework.stereotype.Service;

/**
 * Read-modify-write updates of orders. Each instance of the app may run them at once for the
 * same order; the order's lock makes them take turns in arrival order, and its fencing token
 * guards the write (README, "Fencing"): a holder whose lease was lost, e.g. in a long GC pause,
 * cannot overwrite the work of the holder that took over.
 */
@Service
public class OrderService {

    private final OrderRepository orders;
    private final LockOperations locks;
    private final Duration workTime;

    public OrderService(OrderRepository orders, LockOperations locks, SampleProperties properties) {
        this.orders = orders;
        this.locks = locks;
        this.workTime = properties.workTime();
    }

    /** @throws OrderExistsException if the id is taken */
    public Order create(String orderId, String customer) {
        Order order = new Order(orderId, customer);
        orders.create(order);
        return order;
    }

    public Order get(String orderId) {
        return orders.find(orderId).orElseThrow(() -> new OrderNotFoundException(orderId));
    }

    /**
     * The lock is taken before the order is read and released after it is written, waiting at most
     * {@code dynamolock.default-wait}.
     */
    @QueueLocked(entity = "#orderId")
    public Order addItem(String orderId, Item item) {
        // This thread holds the lock through @QueueLocked: asking the template for it again joins it
        // (re-entry) and gives its handle, for the fencing token.
        LockRequest held = LockRequest.builder(orderId).wait(LockRequest.NO_WAIT).build();
        return locks.execute(held, lock -> fencedUpdate(orderId, lock, order -> {
            simulateWork();
            order.add(item);
        }));
    }

    /** The same update with no lock and no fence: concurrent calls overwrite each other. For the demo only. */
    public Order addItemWithoutLock(String orderId, Item item) {
        Order order = get(orderId);
        simulateWork();
        order.add(item);
        orders.saveUnfenced(order);
        return order;
    }

    /** The programmatic way: the injected {@link LockOperations} (the auto-configured LockTemplate), with the fencing token at hand. */
    public Order applyDiscount(String orderId, int percent) {
        return locks.execute(LockRequest.of(orderId),
                lock -> fencedUpdate(orderId, lock, order -> order.setTotalCents(order.getTotalCents() * (100 - percent) / 100)));
    }

    /** Claims the order with the lock's fencing token, changes it, and writes it back fenced by the same token. */
    private Order fencedUpdate(String orderId, LockHandle lock, Consumer<Order> change) {
        Order order = orders.claim(orderId, lock.fencingToken());
        change.accept(order);
        orders.save(order, lock.fencingToken());
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
