package io.dynamolock.samples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockTemplate;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.assertj.MockMvcTester;
import org.springframework.test.web.servlet.assertj.MvcTestResult;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * An update of an order whose lock's queue is full ({@code dynamolock.max-queue-length}, 1 here) is refused at once,
 * with 503 and Retry-After, and names the order as the sample's other lock problems do.
 */
@SpringBootTest(properties = {"sample.demo.enabled=false", "sample.embedded-dynamodb.port=0",
        "dynamolock.max-queue-length=1", "dynamolock.default-wait=5s"})
@AutoConfigureMockMvc
class LockQueueFullTests {

    @Autowired
    MockMvcTester mvc;

    @Autowired
    LockTemplate locks;

    @Autowired
    DynamoDbClient dynamoDbClient;

    @Test
    void anUpdateOfAnOrderWhoseQueueIsFullIsServiceUnavailableNamingTheOrder() {
        assertThat(post("/orders", "{\"orderId\": \"crowded\", \"customer\": \"ann\"}")).hasStatus(HttpStatus.CREATED);
        // Another instance of the app holds the order's lock: it is the one entry the queue may hold.
        try (LockTemplate otherInstance = LockTemplate.builder(dynamoDbClient).tableName(locks.tableName()).build();
                LockHandle held = otherInstance.acquire("crowded", Duration.ofSeconds(5))) {
            MvcTestResult result = post("/orders/crowded/items", "{\"name\": \"book\", \"priceCents\": 1250}");

            assertThat(result).hasStatus(HttpStatus.SERVICE_UNAVAILABLE)
                    .hasContentType(MediaType.APPLICATION_PROBLEM_JSON).hasHeader("Retry-After", "5").bodyJson()
                    .isLenientlyEqualTo("""
                            {"status": 503, "orderId": "crowded", "instance": "/orders/crowded/items",
                             "detail": "Too many updates of order 'crowded' are queued already. Retry after 5 s"}
                            """);
            assertThat(held.isValid()).isTrue();
        }
        assertThat(mvc.get().uri("/orders/crowded")).hasStatusOk().bodyJson()
                .isLenientlyEqualTo("{\"items\": [], \"totalCents\": 0, \"lastFencingToken\": 0}");
    }

    private MvcTestResult post(String uri, String json) {
        return mvc.post().uri(uri).contentType(MediaType.APPLICATION_JSON).content(json).exchange();
    }
}
