package io.dynamolock.samples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockTemplate;
import java.io.IOException;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.assertj.MockMvcTester;
import org.springframework.test.web.servlet.assertj.MvcTestResult;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;

/**
 * A fenced save whose first attempt lands but whose answer is lost; before the SDK's retry, a later holder takes the
 * lock over and claims the order (reading the landed write). The retry is rejected: the 409 must say that the update
 * may have been stored, or a client that believed "not applied" would retry and add the line twice.
 */
@SpringBootTest(properties = {"sample.demo.enabled=false", "sample.embedded-dynamodb.port=0"})
@AutoConfigureMockMvc
class FencedSaveRetryTests {

    static final AtomicBoolean armed = new AtomicBoolean();
    static volatile Runnable beforeLostAnswer = () -> { };

    @TestConfiguration
    static class LosingClient {

        @Bean
        DynamoDbClient dynamoDbClient(Environment environment) {
            ExecutionInterceptor loseFirstSaveAnswer = new ExecutionInterceptor() {
                @Override
                public void afterTransmission(Context.AfterTransmission context, ExecutionAttributes attributes) {
                    if (context.request() instanceof PutItemRequest put && put.tableName().equals("orders")
                            && put.item().get("orderId").s().equals("retry-order") && armed.compareAndSet(true, false)) {
                        beforeLostAnswer.run();
                        throw SdkClientException.create("lost answer (injected)", new IOException("Connection reset"));
                    }
                }
            };
            return DynamoDbClient.builder()
                    .endpointOverride(URI.create(environment.getRequiredProperty("dynamolock.dynamodb.endpoint")))
                    .region(Region.US_EAST_1)
                    .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")))
                    .overrideConfiguration(c -> c.executionInterceptors(List.of(loseFirstSaveAnswer)))
                    .build();
        }
    }

    @Autowired
    MockMvcTester mvc;

    @Autowired
    OrderService service;

    @Autowired
    OrderRepository orders;

    @Autowired
    LockTemplate locks;

    @Autowired
    DynamoDbClient dynamoDbClient;

    @Test
    void aSaveRejectedOnTheSdksRetryMayHaveBeenStoredAndSaysSo() throws Exception {
        service.create("retry-order", "ann");
        beforeLostAnswer = () -> {
            // Another instance takes the lock over (its clock 2 minutes ahead: the holder's lease looks run out, as
            // after a real partition of a lease), claims the order and reads it, as the README's pattern says.
            try (LockTemplate other = LockTemplate.builder(dynamoDbClient).tableName(locks.tableName())
                    .clock(Clock.offset(Clock.systemUTC(), Duration.ofMinutes(2))).build();
                    LockHandle takenOver = other.acquire("retry-order", Duration.ofSeconds(10))) {
                Order seen = orders.claim("retry-order", takenOver.fencingToken());
                assertThat(seen.getItems()).as("the later holder reads the landed write").containsExactly("once");
            }
        };
        armed.set(true);

        MvcTestResult result = mvc.post().uri("/orders/retry-order/items").contentType(MediaType.APPLICATION_JSON)
                .content("{\"name\": \"once\", \"priceCents\": 999}").exchange();

        assertThat(service.get("retry-order").getItems()).as("the update was stored").containsExactly("once");
        assertThat(result).hasStatus(HttpStatus.CONFLICT);
        assertThat(result.getResponse().getContentAsString())
                .as("a 409 for an update that was stored must not tell the client it was not applied")
                .doesNotContain("was not applied").contains("may have been stored")
                .contains("GET /orders/retry-order");
    }
}
