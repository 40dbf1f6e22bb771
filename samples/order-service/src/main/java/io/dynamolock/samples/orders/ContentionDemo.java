package io.dynamolock.samples.orders;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * At startup, N concurrent updates of one order: first through {@code @QueueLocked}, where each
 * grant is printed with its ticket and none is lost; then the same without a lock, where
 * concurrent read-modify-writes overwrite each other. Off with {@code sample.demo.enabled=false}.
 */
@Component
@ConditionalOnProperty(prefix = "sample.demo", name = "enabled", havingValue = "true", matchIfMissing = true)
public class ContentionDemo implements ApplicationRunner {

    private static final Logger log = LoggerFactory.getLogger("demo");
    private static final long PRICE_CENTS = 1_250;

    private final OrderService service;
    private final GrantLog grantLog;
    private final int requests;
    private final Environment environment;

    public ContentionDemo(OrderService service, GrantLog grantLog, SampleProperties properties, Environment environment) {
        this.service = service;
        this.grantLog = grantLog;
        this.requests = properties.demo().requests();
        this.environment = environment;
    }

    @Override
    public void run(ApplicationArguments args) throws Exception {
        String run = Long.toString(System.currentTimeMillis(), 36);
        log.info("Contention demo: {} concurrent addItem calls on one order, each reading the order, working"
                + " for a moment, and writing it back", requests);

        log.info("Round 1, with @QueueLocked(entity = \"#orderId\"):");
        String locked = "demo-" + run + "-locked";
        Order withLock = round(locked, service::addItem);
        List<GrantLog.Grant> grants = grantLog.grantsOf(locked);
        boolean fifo = grants.stream().mapToLong(GrantLog.Grant::ticket).reduce(Long.MIN_VALUE,
                (previous, ticket) -> ticket > previous ? ticket : Long.MAX_VALUE) != Long.MAX_VALUE;
        report(withLock);
        log.info("  tickets granted in strictly increasing order (FIFO, fencing tokens): {}", fifo ? "yes" : "NO");

        log.info("Round 2, the same calls without a lock:");
        report(round("demo-" + run + "-unlocked", service::addItemWithoutLock));
        log.info("Demo done. The API is up: curl -s localhost:{}/orders/{}",
                environment.getProperty("local.server.port", "8080"), locked);
    }

    private Order round(String orderId, BiFunction<String, Item, Order> addItem) throws Exception {
        service.create(orderId, "demo");
        ExecutorService callers = Executors.newFixedThreadPool(requests, named("caller-"));
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Order>> calls = new ArrayList<>();
            for (int i = 0; i < requests; i++) {
                Item item = new Item("item-" + (i + 1), PRICE_CENTS);
                calls.add(callers.submit(() -> {
                    start.await();
                    return addItem.apply(orderId, item);
                }));
            }
            start.countDown();
            for (Future<Order> call : calls) {
                call.get();
            }
        }
        finally {
            callers.shutdown();
        }
        return service.get(orderId);
    }

    private void report(Order order) {
        int lost = requests - order.getItems().size();
        log.info("  order {}: {} items, total {}; expected {} items, total {} -> {}", order.getOrderId(),
                order.getItems().size(), money(order.getTotalCents()), requests, money(requests * PRICE_CENTS),
                lost == 0 ? "no update lost" : lost + " updates LOST");
    }

    private static String money(long cents) {
        return String.format("%d.%02d", cents / 100, cents % 100);
    }

    private static java.util.concurrent.ThreadFactory named(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> new Thread(runnable, prefix + count.incrementAndGet());
    }
}
