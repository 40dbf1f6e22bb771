package io.dynamolock.samples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.LockTemplate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/** The REST API driven from several threads by a real HTTP client: no update is lost. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"sample.demo.enabled=false", "sample.embedded-dynamodb.port=0"})
class OrderServiceApplicationTests {

    @LocalServerPort
    int port;

    @Autowired
    GrantLog grants;

    @Autowired
    LockTemplate locks;

    @Test
    void concurrentHttpUpdatesOfOneOrderLoseNothing() throws Exception {
        OrderApi api = new OrderApi(port);
        api.create("http-order");
        int threads = 8;
        int perThread = 3;
        ExecutorService callers = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> calls = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int caller = t;
            calls.add(callers.submit(() -> {
                start.await();
                for (int i = 0; i < perThread; i++) {
                    api.addItem("http-order", "item-" + caller + "-" + i, 100);
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> call : calls) {
            call.get(120, TimeUnit.SECONDS);
        }
        callers.shutdown();

        assertThat(api.itemCount("http-order")).isEqualTo(threads * perThread);
        assertThat(api.get("http-order")).contains("\"totalCents\":" + threads * perThread * 100);
        assertThat(grants.grantsOf("http-order")).hasSize(threads * perThread)
                .extracting(GrantLog.Grant::ticket).isSorted().doesNotHaveDuplicates();
        assertThat(locks.queue("http-order", null).entries()).isEmpty();
    }

    @Test
    void discountGoesThroughTheLockTemplateAndRecordsItsFencingToken() {
        OrderApi api = new OrderApi(port);
        api.create("discount-order");
        api.addItem("discount-order", "book", 2_000);
        String discounted = api.discount("discount-order", 25);
        assertThat(discounted).contains("\"totalCents\":1500");
        long token = grants.grantsOf("discount-order").get(1).ticket();
        assertThat(discounted).contains("\"lastFencingToken\":" + token);
    }
}
