package io.dynamolock.samples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

/** Well-formed JSON that is no object ([], "x", 5) is not "Malformed JSON", and the answer says what to send. */
@SpringBootTest(properties = {"sample.demo.enabled=false", "sample.embedded-dynamodb.port=0",
        "dynamolock.default-wait=0"})
@AutoConfigureMockMvc
class WrongShapeBodyTests {

    @Autowired
    MockMvcTester mvc;

    @Test
    void anArrayForAnItemIsABadRequestSayingAnObjectIsExpected() {
        assertThat(mvc.post().uri("/orders").contentType(MediaType.APPLICATION_JSON)
                .content("{\"orderId\": \"shape\", \"customer\": \"ann\"}")).hasStatus(HttpStatus.CREATED);
        for (String body : new String[] {"[]", "\"book\"", "1250"}) {
            assertThat(mvc.post().uri("/orders/shape/items").contentType(MediaType.APPLICATION_JSON).content(body))
                    .hasStatus(HttpStatus.BAD_REQUEST).bodyJson().extractingPath("$.detail").asString()
                    .as("for the body %s", body)
                    .doesNotStartWith("Malformed JSON").doesNotContain("io.dynamolock").contains("object");
        }
    }

    /** A JSON object followed by more JSON (two bodies pasted together) is not "no object": it says what follows. */
    @Test
    void anObjectWithTrailingJsonIsNotToldToSendAnObject() {
        assertThat(mvc.post().uri("/orders").contentType(MediaType.APPLICATION_JSON)
                .content("{\"orderId\": \"trailing\", \"customer\": \"ann\"}")).hasStatus(HttpStatus.CREATED);
        assertThat(mvc.post().uri("/orders/trailing/items").contentType(MediaType.APPLICATION_JSON)
                .content("{\"name\": \"book\", \"priceCents\": 1250} {\"name\": \"pen\", \"priceCents\": 100}"))
                .hasStatus(HttpStatus.BAD_REQUEST).bodyJson().extractingPath("$.detail").asString()
                .doesNotStartWith("The request body must be a JSON object").contains("after");
    }
}
