package io.dynamolock.samples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.assertj.MockMvcTester;
import org.springframework.test.web.servlet.assertj.MvcTestResult;

/**
 * A client that accepts no JSON answer (Accept: text/plain, application/xml...) is refused with 406: the refusal
 * must come before the update, or a client told that its request failed retries it and adds the item twice.
 */
@SpringBootTest(properties = {"sample.demo.enabled=false", "sample.embedded-dynamodb.port=0",
        "dynamolock.default-wait=0"})
@AutoConfigureMockMvc
class NotAcceptableUpdateTests {

    @Autowired
    MockMvcTester mvc;

    @Test
    void anUpdateRefusedWithNotAcceptableIsNotApplied() {
        assertThat(post("/orders", "{\"orderId\": \"accept\", \"customer\": \"ann\"}", MediaType.APPLICATION_JSON))
                .hasStatus(HttpStatus.CREATED);

        MvcTestResult refused = post("/orders/accept/items", "{\"name\": \"book\", \"priceCents\": 1250}",
                MediaType.TEXT_PLAIN);

        assertThat(refused).hasStatus(HttpStatus.NOT_ACCEPTABLE);
        assertThat(mvc.get().uri("/orders/accept")).hasStatusOk().bodyJson()
                .isLenientlyEqualTo("{\"items\": [], \"totalCents\": 0, \"lastFencingToken\": 0}");
    }

    @Test
    void anOrderRefusedWithNotAcceptableIsNotCreated() {
        MvcTestResult refused = post("/orders", "{\"orderId\": \"accept-new\", \"customer\": \"ann\"}",
                MediaType.TEXT_HTML);

        assertThat(refused).hasStatus(HttpStatus.NOT_ACCEPTABLE);
        assertThat(mvc.get().uri("/orders/accept-new")).hasStatus(HttpStatus.NOT_FOUND);
    }

    /** An Accept header that cannot be parsed: refused before the handler, and still as a problem detail. */
    @Test
    void anUnparseableAcceptIsAProblemDetail() {
        assertThat(mvc.post().uri("/orders/any/items").contentType(MediaType.APPLICATION_JSON).header("Accept", "json")
                .content("{\"name\": \"book\", \"priceCents\": 1250}"))
                .hasStatus(HttpStatus.NOT_ACCEPTABLE).hasContentType(MediaType.APPLICATION_PROBLEM_JSON);
    }

    private MvcTestResult post(String uri, String json, MediaType accept) {
        return mvc.post().uri(uri).contentType(MediaType.APPLICATION_JSON).accept(accept).content(json).exchange();
    }
}
