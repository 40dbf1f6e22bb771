package io.dynamolock.samples.orders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.doAnswer;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.QueueSnapshot;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.context.bean.override.mockito.MockitoSpyBean;
import org.springframework.test.web.servlet.assertj.MockMvcTester;
import org.springframework.test.web.servlet.assertj.MvcTestResult;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The README's fencing pattern at work in the sample: every write of an order carries the fencing
 * token of the order's lock, and a write with an older token than the order has seen is rejected.
 */
@SpringBootTest(properties = {"sample.demo.enabled=false", "sample.embedded-dynamodb.port=0"})
@AutoConfigureMockMvc
class OrderFencingTests {

    @Autowired
    MockMvcTester mvc;

    @Autowired
    OrderService service;

    @MockitoSpyBean
    OrderRepository orders;

    @Autowired
    LockTemplate locks;

    @Autowired
    DynamoDbClient dynamoDbClient;

    @Test
    void writesWithAnOlderTokenThanTheOrdersAreRejected() {
        service.create("stale-order", "ann");
        long older;
        try (LockHandle first = locks.acquire("stale-order", Duration.ofSeconds(5))) {
            older = first.fencingToken();
        }
        Order claimed;
        long newer;
        try (LockHandle second = locks.acquire("stale-order", Duration.ofSeconds(5))) {
            newer = second.fencingToken();
            claimed = orders.claim("stale-order", newer);
        }
        assertThat(newer).isGreaterThan(older);
        assertThat(claimed.getLastFencingToken()).isEqualTo(newer);

        Order late = orders.find("stale-order").orElseThrow();
        late.add(new Item("late", 999L));
        assertThatExceptionOfType(StaleFencingTokenException.class).isThrownBy(() -> orders.save(late, older))
                .withMessage("Write to order 'stale-order' with fencing token " + older + " rejected: a later lock"
                        + " holder claimed it with token " + newer + ". This holder's lease was lost; its update was"
                        + " not applied");
        assertThatExceptionOfType(StaleFencingTokenException.class).isThrownBy(() -> orders.claim("stale-order", older));

        Order stored = service.get("stale-order");
        assertThat(stored.getItems()).isEmpty();
        assertThat(stored.getLastFencingToken()).isEqualTo(newer);
        orders.save(stored, newer);
        assertThat(service.get("stale-order").getLastFencingToken()).as("the holder itself may write again").isEqualTo(newer);
    }

    /**
     * A holder stalls after reading the order (a long GC pause, say); its lease runs out, and another
     * instance takes the lock over and updates the order. When the first holder resumes, its write is
     * rejected and its caller told so; the other instance's update stands.
     */
    @Test
    void holderWhoseLeaseWasTakenOverCannotOverwriteTheNextHoldersUpdate() throws Exception {
        service.create("paused-order", "ann");
        CountDownLatch firstHolderRead = new CountDownLatch(1);
        CountDownLatch resumeFirstHolder = new CountDownLatch(1);
        AtomicLong stalledToken = new AtomicLong();
        doAnswer(call -> {
            Object read = call.callRealMethod();
            if (stalledToken.compareAndSet(0, call.getArgument(1))) {
                firstHolderRead.countDown();
                assertThat(resumeFirstHolder.await(60, TimeUnit.SECONDS)).isTrue();
            }
            return read;
        }).when(orders).claim(eq("paused-order"), anyLong());

        CompletableFuture<MvcTestResult> stalled = CompletableFuture.supplyAsync(() -> mvc.post()
                .uri("/orders/paused-order/items").contentType(MediaType.APPLICATION_JSON)
                .content("{\"name\": \"stale\", \"priceCents\": 999}").exchange());
        assertThat(firstHolderRead.await(30, TimeUnit.SECONDS)).isTrue();

        // The other instance's clock is two minutes ahead, so it sees the stalled holder's lease (60 s, renewed
        // every 30 s) as run out and takes the lock over at once, as it would one lease after a real stall.
        try (LockTemplate otherInstance = LockTemplate.builder(dynamoDbClient).tableName(locks.tableName())
                .clock(Clock.offset(Clock.systemUTC(), Duration.ofMinutes(2))).build();
                LockHandle takenOver = otherInstance.acquire("paused-order", Duration.ofSeconds(10))) {
            assertThat(takenOver.fencingToken()).isGreaterThan(stalledToken.get());
            Order order = orders.claim("paused-order", takenOver.fencingToken());
            order.add(new Item("fresh", 1_250L));
            orders.save(order, takenOver.fencingToken());
        }
        resumeFirstHolder.countDown();

        MvcTestResult result = stalled.get(30, TimeUnit.SECONDS);
        assertThat(result).hasStatus(HttpStatus.CONFLICT).hasContentType(MediaType.APPLICATION_PROBLEM_JSON)
                .bodyJson().isLenientlyEqualTo("{\"orderId\": \"paused-order\", \"fencingToken\": " + stalledToken.get() + "}");
        Order stored = service.get("paused-order");
        assertThat(stored.getItems()).containsExactly("fresh");
        assertThat(stored.getTotalCents()).isEqualTo(1_250);
    }

    /**
     * The holder's entry is broken by an operator while it works, and no one else claims the order meanwhile: its
     * fenced write is accepted, yet its call fails with LockLostException. The client is told that the update may
     * have been stored and to read the order before retrying, since a blind retry would add the item twice.
     */
    @Test
    void anUpdateWhoseLockWasLostIsAConflictSayingItMayHaveBeenStored() throws Exception {
        MvcTestResult result = updateWhoseLockIsBrokenAfterTheClaim("broken-order", "items",
                "{\"name\": \"once\", \"priceCents\": 999}");
        assertThat(service.get("broken-order").getItems()).as("the fenced write was accepted").containsExactly("once");
        assertThat(result).hasStatus(HttpStatus.CONFLICT).hasContentType(MediaType.APPLICATION_PROBLEM_JSON)
                .bodyJson().isLenientlyEqualTo("{\"orderId\": \"broken-order\", \"detail\": \"The lock of order"
                        + " 'broken-order' was lost during this update: the update may have been stored. GET"
                        + " /orders/broken-order to see whether it was before retrying\"}");
    }

    /** The same through LockTemplate.execute (the discount), whose callback returned normally after the break. */
    @Test
    void aDiscountWhoseLockWasLostIsAConflictToo() throws Exception {
        MvcTestResult result = updateWhoseLockIsBrokenAfterTheClaim("broken-discount", "discount",
                "{\"percent\": 10}");
        assertThat(result).hasStatus(HttpStatus.CONFLICT).bodyJson().extractingPath("$.orderId")
                .isEqualTo("broken-discount");
    }

    /** Posts an update of a new order and breaks its lock while the update holds it, between claim and save. */
    private MvcTestResult updateWhoseLockIsBrokenAfterTheClaim(String orderId, String path, String body)
            throws Exception {
        service.create(orderId, "ann");
        CountDownLatch holderClaimed = new CountDownLatch(1);
        CountDownLatch resumeHolder = new CountDownLatch(1);
        AtomicLong holderToken = new AtomicLong();
        doAnswer(call -> {
            Object claimed = call.callRealMethod();
            if (holderToken.compareAndSet(0, call.getArgument(1))) {
                holderClaimed.countDown();
                assertThat(resumeHolder.await(60, TimeUnit.SECONDS)).isTrue();
            }
            return claimed;
        }).when(orders).claim(eq(orderId), anyLong());

        CompletableFuture<MvcTestResult> update = CompletableFuture.supplyAsync(() -> mvc.post()
                .uri("/orders/" + orderId + "/" + path).contentType(MediaType.APPLICATION_JSON)
                .content(body).exchange());
        assertThat(holderClaimed.await(30, TimeUnit.SECONDS)).isTrue();
        locks.breakLock(orderId, null, holderToken.get());
        resumeHolder.countDown();
        return update.get(30, TimeUnit.SECONDS);
    }

    /**
     * An update still waiting for the order's lock whose entry is broken (runbook: "A broken waiter's acquire throws
     * LockLostException") never ran, so nothing can have been stored: the client is told to retry later, not to read
     * the order first.
     */
    @Test
    void anUpdateThatLostItsPlaceInTheQueueIsARetryLater() throws Exception {
        service.create("waiting-order", "ann");
        try (LockHandle holder = locks.acquire("waiting-order", Duration.ofSeconds(5))) {
            CompletableFuture<MvcTestResult> waiting = CompletableFuture.supplyAsync(() -> mvc.post()
                    .uri("/orders/waiting-order/items").contentType(MediaType.APPLICATION_JSON)
                    .content("{\"name\": \"never-ran\", \"priceCents\": 999}").exchange());
            locks.breakLock("waiting-order", null, awaitWaiterBehind("waiting-order", holder));

            MvcTestResult result = waiting.get(30, TimeUnit.SECONDS);
            assertThat(service.get("waiting-order").getItems()).as("the update never ran").isEmpty();
            assertThat(result).hasStatus(HttpStatus.SERVICE_UNAVAILABLE).hasHeader("Retry-After", "5")
                    .bodyJson().isLenientlyEqualTo("{\"orderId\": \"waiting-order\", \"detail\": \"The update of order"
                            + " 'waiting-order' lost its place in the lock's queue before it ran; nothing was stored."
                            + " Retry after 5 s\"}");
        }
    }

    /** The ticket of the entry queued behind {@code holder}, once the stored queue has one. */
    private long awaitWaiterBehind(String orderId, LockHandle holder) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() - deadline < 0) {
            for (QueueSnapshot.Entry entry : locks.queue(orderId, null).entries()) {
                if (entry.ticket() != holder.fencingToken()) {
                    return entry.ticket();
                }
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
        throw new AssertionError("the update never queued for " + orderId);
    }
}
