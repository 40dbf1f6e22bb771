package io.dynamolock.samples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockTemplate;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
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

    @Autowired
    MeterRegistry meters;

    @Test
    void concurrentHttpUpdatesOfOneOrderLoseNothing() throws Exception {
        OrderApi api = new OrderApi(port);
        api.create("http-order");
        int threads = 8;
        int perThread = 3;
        Callers.run(threads, perThread, (caller, i) -> api.addItem("http-order", "item-" + caller + "-" + i, 100));

        assertThat(api.itemCount("http-order")).isEqualTo(threads * perThread);
        assertThat(api.get("http-order")).contains("\"totalCents\":" + threads * perThread * 100);
        assertThat(grants.grantsOf("http-order")).hasSize(threads * perThread)
                .extracting(GrantLog.Grant::ticket).isSorted().doesNotHaveDuplicates();
        assertThat(locks.queue("http-order", null).entries()).isEmpty();
    }

    @Test
    void actuatorShowsHealthHeldLocksAndTheStoredQueue() throws Exception {
        OrderApi api = new OrderApi(port);
        assertThat(api.getPath("/actuator/health/dynamolock")).contains("\"status\":\"UP\"", "\"ttlEnabled\":true");
        try (LockHandle held = locks.acquire("actuator-order", java.time.Duration.ofSeconds(5))) {
            assertThat(api.getPath("/actuator/dynamolock")).contains("\"entity\":\"actuator-order\"",
                    "\"ticket\":" + held.fencingToken(), "\"holding\":true");
            assertThat(api.getPath("/actuator/dynamolock/actuator-order")).contains("\"owner\":\"" + held.owner() + "\"",
                    "\"ticket\":" + held.fencingToken());
        }
        assertThat(api.getPath("/actuator/metrics/dynamolock.acquire")).contains("\"name\":\"dynamolock.acquire\"");
    }

    /** Actuator meters the lock's observations too: under their own names, not in dynamolock.acquire a second time. */
    @Test
    void oneUpdateIsOneAcquisitionInTheMetrics() {
        OrderApi api = new OrderApi(port);
        api.create("metered-order");
        double before = acquisitions();
        api.addItem("metered-order", "book", 100);
        assertThat(acquisitions() - before).isEqualTo(1);
    }

    /** What /actuator/metrics/dynamolock.acquire?tag=outcome:acquired reports as COUNT. */
    private double acquisitions() {
        return meters.find("dynamolock.acquire").tag("outcome", "acquired").timers().stream()
                .mapToDouble(Timer::count).sum();
    }

    @Test
    void actuatorCannotBreakALockUnlessTheApplicationAllowsIt() {
        OrderApi api = new OrderApi(port);
        try (LockHandle held = locks.acquire("unbreakable-order", java.time.Duration.ofSeconds(5))) {
            api.deletePath("/actuator/dynamolock/unbreakable-order?ticket=" + held.fencingToken(), 405);
            assertThat(held.isValid()).isTrue();
            assertThat(locks.queue("unbreakable-order", null).entries()).hasSize(1);
        }
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
