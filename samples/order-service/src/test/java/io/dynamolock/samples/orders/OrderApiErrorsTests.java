package io.dynamolock.samples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockTemplate;
import java.time.Duration;
import java.util.List;
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
 * Bad requests, as a new user sends them: each is answered with the right status and an RFC 9457
 * problem body that names what was wrong, and none changes a stored order.
 */
@SpringBootTest(properties = {"sample.demo.enabled=false", "sample.embedded-dynamodb.port=0",
        "dynamolock.default-wait=0"})
@AutoConfigureMockMvc
class OrderApiErrorsTests {

    @Autowired
    MockMvcTester mvc;

    @Autowired
    LockTemplate locks;

    @Autowired
    DynamoDbClient dynamoDbClient;

    @Autowired
    OrderRepository orders;

    @Test
    void orderWithoutIdGetsAGeneratedOne() {
        MvcTestResult created = post("/orders", "{\"customer\": \"ann\"}");

        assertThat(created).hasStatus(HttpStatus.CREATED);
        String orderId = created.getResponse().getHeader("Location").replaceFirst(".*/orders/", "");
        assertThat(orderId).matches("[0-9a-f-]{36}");
        assertThat(created).bodyJson().extractingPath("$.orderId").isEqualTo(orderId);
        assertThat(mvc.get().uri("/orders/" + orderId)).hasStatusOk().bodyJson()
                .extractingPath("$.customer").isEqualTo("ann");
    }

    @Test
    void emptyOrderIdIsABadRequestNamingTheFieldAndTheFix() {
        assertProblem(post("/orders", "{\"orderId\": \"\", \"customer\": \"ann\"}"), HttpStatus.BAD_REQUEST, """
                {"title": "Bad Request", "status": 400, "instance": "/orders",
                 "errors": [{"field": "orderId", "rejectedValue": "",
                             "message": "must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit; leave it out to get a generated id"}]}
                """);
    }

    @Test
    void orderIdThatIsNoPathSegmentIsABadRequest() {
        assertProblem(post("/orders", "{\"orderId\": \"a/b\", \"customer\": \"ann\"}"), HttpStatus.BAD_REQUEST,
                "{\"errors\": [{\"field\": \"orderId\", \"rejectedValue\": \"a/b\"}]}");
        assertProblem(mvc.get().uri("/orders/.hidden").exchange(), HttpStatus.BAD_REQUEST,
                "{\"errors\": [{\"field\": \"orderId\", \"rejectedValue\": \".hidden\"}]}");
    }

    @Test
    void missingFieldsAreEachNamed() {
        assertProblem(post("/orders", "{}"), HttpStatus.BAD_REQUEST, """
                {"detail": "customer must not be blank",
                 "errors": [{"field": "customer", "rejectedValue": null, "message": "must not be blank"}]}
                """);
        create("no-fields");
        assertProblem(post("/orders/no-fields/items", "{}"), HttpStatus.BAD_REQUEST, """
                {"detail": "name must not be blank; priceCents must not be null",
                 "errors": [{"field": "name"}, {"field": "priceCents"}]}
                """);
        assertProblem(post("/orders/no-fields/discount", "{}"), HttpStatus.BAD_REQUEST,
                "{\"errors\": [{\"field\": \"percent\", \"message\": \"must not be null\"}]}");
        assertUnchanged("no-fields");
    }

    @Test
    void fieldsUnderOtherNamesAreABadRequestNotStoredAsNull() {
        create("other-names");
        assertProblem(post("/orders/other-names/items", "{\"title\": \"book\", \"price\": 1250}"),
                HttpStatus.BAD_REQUEST, "{\"detail\": \"Unknown field 'title': the fields are [name, priceCents]\"}");
        assertProblem(post("/orders", "{\"id\": \"o-7\", \"client\": \"ann\"}"), HttpStatus.BAD_REQUEST,
                "{\"detail\": \"Unknown field 'id': the fields are [orderId, customer]\"}");
        assertUnchanged("other-names");
    }

    @Test
    void valuesOutsideTheirRangeAreABadRequest() {
        create("ranges");
        assertProblem(post("/orders/ranges/items", "{\"name\": \"book\", \"priceCents\": -1250}"),
                HttpStatus.BAD_REQUEST, """
                {"errors": [{"field": "priceCents", "rejectedValue": -1250, "message": "must be greater than 0"}]}
                """);
        assertProblem(post("/orders/ranges/discount", "{\"percent\": 150}"), HttpStatus.BAD_REQUEST, """
                {"errors": [{"field": "percent", "rejectedValue": 150, "message": "must be less than or equal to 100"}]}
                """);
        // Bounded, so that no sum of valid lines overflows the total.
        assertProblem(post("/orders/ranges/items", "{\"name\": \"yacht\", \"priceCents\": 9223372036854775807}"),
                HttpStatus.BAD_REQUEST, """
                {"errors": [{"field": "priceCents", "rejectedValue": 9223372036854775807,
                             "message": "must be at most 1000000000000 (10,000,000,000.00)"}]}
                """);
        assertUnchanged("ranges");
    }

    /** A huge value is refused without being sent back whole: the answer shows its start and its length. */
    @Test
    void aHugeValueIsABadRequestThatQuotesOnlyItsStart() {
        create("huge");
        String name = "n".repeat(500_000);

        MvcTestResult result = post("/orders/huge/items", "{\"name\": \"" + name + "\", \"priceCents\": 1}");

        assertProblem(result, HttpStatus.BAD_REQUEST, """
                {"errors": [{"field": "name", "message": "size must be between 0 and 200",
                             "rejectedValue": "%s... (500000 characters)"}]}
                """.formatted("n".repeat(OrderApiExceptionHandler.QUOTED_LENGTH)));
        assertThat(result.getResponse().getContentAsByteArray().length)
                .isLessThan(2_000);
        assertUnchanged("huge");
    }

    /** Cents and percents are whole numbers: 12.99 is refused, not stored as 12; so is "12.99" (a string). */
    @Test
    void fractionalNumbersAreABadRequestNamingTheFieldNotTruncated() {
        create("fractions");
        assertProblem(post("/orders/fractions/items", "{\"name\": \"book\", \"priceCents\": 12.99}"),
                HttpStatus.BAD_REQUEST, "{\"detail\": \"Field 'priceCents': 12.99 is not an integer: send a whole"
                        + " number, without a decimal point\"}");
        assertProblem(post("/orders/fractions/discount", "{\"percent\": 99.9}"), HttpStatus.BAD_REQUEST,
                "{\"detail\": \"Field 'percent': 99.9 is not an integer: send a whole number, without a decimal"
                        + " point\"}");
        assertThat(post("/orders/fractions/items", "{\"name\": \"book\", \"priceCents\": \"12.99\"}"))
                .hasStatus(HttpStatus.BAD_REQUEST).bodyJson().extractingPath("$.detail").asString()
                .isEqualTo("Field 'priceCents': Cannot coerce String value (\"12.99\") to a whole number value");
        assertUnchanged("fractions");
    }

    @Test
    void aFullOrderRefusesAnotherLineWithAConflictAndStaysStored() {
        // As full as an order gets, every line at the largest name and price: it must still fit one DynamoDB item.
        Order full = new Order("full", "ann");
        for (int line = 0; line < Order.MAX_ITEMS; line++) {
            full.add(new Item("\u6f22".repeat(200), Item.MAX_PRICE_CENTS));
        }
        orders.create(full);

        assertProblem(post("/orders/full/items", "{\"name\": \"pen\", \"priceCents\": 1}"), HttpStatus.CONFLICT,
                "{\"detail\": \"Order 'full' has " + Order.MAX_ITEMS + " items, the most one order holds: start"
                + " another order\"}");
        assertThat(post("/orders/full/discount", "{\"percent\": 10}")).as("the lock was given back")
                .hasStatusOk().bodyJson().extractingPath("$.totalCents")
                .isEqualTo(Order.MAX_ITEMS * Item.MAX_PRICE_CENTS / 100 * 90);
    }

    @Test
    void malformedJsonIsABadRequestSayingWhere() {
        create("malformed");
        MvcTestResult result = post("/orders/malformed/items", "{\"name\": \"book\", \"priceCents\": 12,50}");
        assertProblem(result, HttpStatus.BAD_REQUEST, "{\"title\": \"Bad Request\"}");
        assertThat(result).bodyJson().extractingPath("$.detail").asString()
                .startsWith("Malformed JSON at line 1, column 35: Unexpected character");
        assertThat(post("/orders/malformed/items", "{\"name\": \"book\", \"priceCents\": \"twelve\"}")).bodyJson()
                .extractingPath("$.detail").asString()
                .isEqualTo("Field 'priceCents': Cannot coerce String value (\"twelve\") to a whole number value");
        assertThat(post("/orders/malformed/items", "")).hasStatus(HttpStatus.BAD_REQUEST).bodyJson()
                .extractingPath("$.detail").asString().startsWith("The request body is missing or is not JSON");
        assertUnchanged("malformed");
    }

    /**
     * Jackson's words name its own configuration (features to enable, stream constraints) and an unknown source: the
     * client is told what is wrong with its JSON, not how the server is configured.
     */
    @Test
    void malformedJsonIsToldWithoutTheParsersInternals() {
        create("internals");
        for (String body : List.of("{\"name\": \"book\"", "{\"name\": \"book\", \"priceCents\": NaN}",
                "{\"name\": \"book\", \"priceCents\": " + "9".repeat(1_200) + "}")) {
            MvcTestResult result = post("/orders/internals/items", body);
            assertThat(result).hasStatus(HttpStatus.BAD_REQUEST);
            assertThat(result).bodyJson().extractingPath("$.detail").asString()
                    .as(body.substring(0, Math.min(body.length(), 40)))
                    .doesNotContain("REDACTED", "Source", "Feature", "StreamReadConstraints", "#UNKNOWN", "`");
        }
        assertThat(post("/orders/internals/items", "{\"name\": \"book\"")).bodyJson().extractingPath("$.detail")
                .asString().isEqualTo("Malformed JSON at line 1, column 16: the body ends before its object does");
        assertUnchanged("internals");
    }

    /** More of Jackson's words that speak of the server, and a client's own value, which is quoted as sent. */
    @Test
    void fieldErrorsSpeakJsonAndQuoteTheValueAsSent() {
        create("terms");
        assertThat(post("/orders/terms/items", "{\"name\": 1.5, \"priceCents\": 100}"))
                .hasStatus(HttpStatus.BAD_REQUEST)
                .bodyJson().extractingPath("$.detail").asString().startsWith("Field 'name':")
                .doesNotContain("whole number");
        assertThat(post("/orders/terms/items", "{\"name\": \"pen\" /* note */, \"priceCents\": 100}"))
                .hasStatus(HttpStatus.BAD_REQUEST).bodyJson().extractingPath("$.detail").asString()
                .doesNotContain("Feature", "ALLOW_COMMENTS", "parser");
        assertThat(post("/orders/terms/items", "{\"name\": [\"pen\"], \"priceCents\": 100}"))
                .hasStatus(HttpStatus.BAD_REQUEST).bodyJson().extractingPath("$.detail").asString()
                .startsWith("Field 'name':").doesNotContain("JsonToken", "token");
        String odd = "(but could if x) `java.lang.String` [Source: z]";
        assertThat(post("/orders/terms/items", "{\"name\": \"pen\", \"priceCents\": \"" + odd + "\"}"))
                .hasStatus(HttpStatus.BAD_REQUEST).bodyJson().extractingPath("$.detail").asString().contains(odd);
        assertUnchanged("terms");
    }

    /** A field sent twice is refused, not taken with its last value: which one the client meant is unknown. */
    @Test
    void aFieldSentTwiceIsABadRequestNamingIt() {
        create("twice");
        assertProblem(post("/orders/twice/items", "{\"name\": \"book\", \"priceCents\": 1250, \"name\": \"pen\"}"),
                HttpStatus.BAD_REQUEST, "{\"title\": \"Bad Request\", \"detail\": \"Field 'name' appears again at line 1,"
                        + " column 44: send each field once\"}");
        assertProblem(post("/orders", "{\"orderId\": \"twice-a\", \"customer\": \"ann\", \"orderId\": \"twice-b\"}"),
                HttpStatus.BAD_REQUEST, "{\"detail\": \"Field 'orderId' appears again at line 1, column 52: send each"
                        + " field once\"}");
        assertThat(mvc.get().uri("/orders/twice-a")).hasStatus(HttpStatus.NOT_FOUND);
        assertThat(mvc.get().uri("/orders/twice-b")).hasStatus(HttpStatus.NOT_FOUND);
        assertUnchanged("twice");
    }

    /** A number in quotes, a number or a boolean for a text: the wrong type, not silently converted. */
    @Test
    void valuesOfTheWrongTypeAreABadRequestNotConverted() {
        create("typed");
        assertThat(post("/orders/typed/items", "{\"name\": \"pen\", \"priceCents\": \"300\"}"))
                .as("a string for priceCents").hasStatus(HttpStatus.BAD_REQUEST).bodyJson()
                .extractingPath("$.detail").asString().startsWith("Field 'priceCents':");
        assertThat(post("/orders/typed/items", "{\"name\": 5, \"priceCents\": 300}")).as("a number for name")
                .hasStatus(HttpStatus.BAD_REQUEST).bodyJson().extractingPath("$.detail").asString()
                .isEqualTo("Field 'name': Cannot coerce Integer value (5) to a string value");
        assertThat(post("/orders", "{\"customer\": true}")).as("a boolean for customer")
                .hasStatus(HttpStatus.BAD_REQUEST);
        assertUnchanged("typed");
    }

    @Test
    void unknownOrderIsNotFoundAndNotCreatedByAnUpdate() {
        String detail = "No order 'nobody'. Create it first: POST /orders {\\\"orderId\\\": \\\"nobody\\\", \\\"customer\\\": \\\"...\\\"}";
        assertProblem(mvc.get().uri("/orders/nobody").exchange(), HttpStatus.NOT_FOUND,
                "{\"status\": 404, \"detail\": \"" + detail + "\", \"orderId\": \"nobody\", \"instance\": \"/orders/nobody\"}");
        assertProblem(post("/orders/nobody/items", "{\"name\": \"book\", \"priceCents\": 1250}"), HttpStatus.NOT_FOUND,
                "{\"orderId\": \"nobody\"}");
        assertProblem(post("/orders/nobody/discount", "{\"percent\": 10}"), HttpStatus.NOT_FOUND,
                "{\"orderId\": \"nobody\"}");
        assertThat(mvc.get().uri("/orders/nobody")).hasStatus(HttpStatus.NOT_FOUND);
    }

    @Test
    void secondOrderWithTheSameIdIsAConflict() {
        create("taken");
        assertProblem(post("/orders", "{\"orderId\": \"taken\", \"customer\": \"bob\"}"), HttpStatus.CONFLICT,
                "{\"status\": 409, \"orderId\": \"taken\", \"detail\": \"Order 'taken' exists already. Leave orderId"
                        + " out to get a generated id, or choose another\"}");
        assertThat(mvc.get().uri("/orders/taken")).bodyJson().extractingPath("$.customer").isEqualTo("ann");
    }

    @Test
    void orderWhoseLockStaysTakenIsServiceUnavailableWithRetryAfter() {
        create("busy");
        // Another instance of the app holds the order's lock; this one waits dynamolock.default-wait (0 here).
        try (LockTemplate otherInstance = LockTemplate.builder(dynamoDbClient).tableName(locks.tableName()).build();
                LockHandle held = otherInstance.acquire("busy", Duration.ofSeconds(5))) {
            MvcTestResult result = post("/orders/busy/items", "{\"name\": \"book\", \"priceCents\": 1250}");

            assertProblem(result, HttpStatus.SERVICE_UNAVAILABLE, "{\"status\": 503, \"orderId\": \"busy\"}");
            assertThat(result).hasHeader("Retry-After", "5").bodyJson().extractingPath("$.detail").asString()
                    .matches("Order 'busy' is busy: its lock was still taken after waiting \\d+ ms, with 1 update\\(s\\)"
                            + " ahead. Retry after 5 s");
            assertThat(held.isValid()).isTrue();
        }
        assertUnchanged("busy");
    }

    private MvcTestResult post(String uri, String json) {
        return mvc.post().uri(uri).contentType(MediaType.APPLICATION_JSON).content(json).exchange();
    }

    private void create(String orderId) {
        assertThat(post("/orders", "{\"orderId\": \"" + orderId + "\", \"customer\": \"ann\"}")).hasStatus(HttpStatus.CREATED);
    }

    private void assertUnchanged(String orderId) {
        assertThat(mvc.get().uri("/orders/" + orderId)).hasStatusOk().bodyJson()
                .isLenientlyEqualTo("{\"items\": [], \"totalCents\": 0, \"lastFencingToken\": 0}");
    }

    private static void assertProblem(MvcTestResult result, HttpStatus status, String expectedJson) {
        assertThat(result).hasStatus(status).hasContentType(MediaType.APPLICATION_PROBLEM_JSON).bodyJson()
                .isLenientlyEqualTo(expectedJson);
    }
}
