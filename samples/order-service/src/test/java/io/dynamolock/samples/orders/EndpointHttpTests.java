package io.dynamolock.samples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.QueueSnapshot;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;

/** The runbook's commands over real HTTP, as an operator's curl sends them. */
@ExtendWith(OutputCaptureExtension.class)
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"sample.demo.enabled=false", "sample.embedded-dynamodb.port=0",
                "management.endpoint.dynamolock.access=unrestricted"})
class EndpointHttpTests {

    @LocalServerPort
    int port;

    @Autowired
    LockTemplate locks;

    private final HttpClient http = HttpClient.newHttpClient();

    /**
     * An entity with a '/': its path form read the lock of entity "tenant" in namespace "7" (empty), and an encoded
     * %2F is refused by the server before the endpoint. The query form reads the queue and breaks the entry.
     */
    @Test
    void aLockWhoseEntityHasASlashIsShownAndBrokenThroughTheQuery() throws Exception {
        LockHandle held = locks.acquire(LockRequest.builder("tenant/7").failClosed(true).build());
        try {
            HttpResponse<String> shown = send("GET", "/actuator/dynamolock?entity=tenant%2F7");
            assertThat(shown.statusCode()).isEqualTo(200);
            assertThat(shown.body()).as("the queue as stored").contains("\"entity\":\"tenant/7\"", "\"nextTicket\"",
                    "\"status\":\"alive\"", "\"ticket\":" + held.fencingToken());
            HttpResponse<String> broken = send("DELETE", "/actuator/dynamolock?entity=tenant%2F7&ticket="
                    + held.fencingToken());
            assertThat(broken.statusCode()).as(broken.body()).isEqualTo(200);
            assertThat(locks.queue("tenant/7", null).entries()).isEmpty();
            HttpResponse<String> mine = send("GET", "/actuator/dynamolock");
            assertThat(mine.statusCode()).isEqualTo(200);
            assertThat(mine.body()).as("this instance's locks").contains("\"owner\"", "\"locks\"")
                    .doesNotContain("\"status\"", "\"body\"");
        }
        finally {
            held.release();
        }
    }

    /**
     * An entity with a ';': the server drops ";7" from the path as a path parameter, so the path form would show and
     * break the lock of entity "tenant". It is refused, naming the query form, and "tenant"'s holder is untouched.
     */
    @Test
    void aPathWithASemicolonIsRefusedNeverReadAsAnotherLock() throws Exception {
        LockHandle other = locks.acquire(LockRequest.builder("tenant").failClosed(true).build());
        LockHandle stuck = locks.acquire(LockRequest.builder("tenant;7").failClosed(true).build());
        try {
            HttpResponse<String> shown = send("GET", "/actuator/dynamolock/tenant;7");
            assertThat(shown.statusCode()).as(shown.body()).isEqualTo(400);
            assertThat(shown.body()).contains("GET /actuator/dynamolock?entity=E").doesNotContain("\"entries\"");
            HttpResponse<String> broken = send("DELETE", "/actuator/dynamolock/tenant;7?ticket="
                    + other.fencingToken());
            assertThat(broken.statusCode()).as(broken.body()).isEqualTo(400);
            assertThat(locks.queue("tenant", null).entries()).extracting(QueueSnapshot.Entry::ticket)
                    .containsExactly(other.fencingToken());
            assertThat(other.isValid()).isTrue();
            HttpResponse<String> viaQuery = send("GET", "/actuator/dynamolock?entity=tenant%3B7");
            assertThat(viaQuery.body()).contains("\"entity\":\"tenant;7\"", "\"ticket\":" + stuck.fencingToken());
        }
        finally {
            stuck.release();
            other.release();
        }
    }

    /**
     * A query whose percent-escapes are no UTF-8 (a lone byte, an encoded surrogate) fails in the server as the
     * parameters are read: the client's mistake, a 400 saying how to encode, not a 500 logged as a fault of ours.
     */
    @Test
    void aQueryThatIsNotUtf8IsABadRequestNamingTheEncoding(CapturedOutput output) throws Exception {
        for (String[] request : new String[][] {{"GET", "/actuator/dynamolock?entity=%FF"},
                {"GET", "/actuator/health?x=%FF"}, {"GET", "/actuator/dynamolock?entity=%ED%A0%80"},
                {"DELETE", "/actuator/dynamolock?entity=tenant&ticket=%FF"}}) {
            HttpResponse<String> answer = send(request[0], request[1]);
            assertThat(answer.statusCode()).as(request[0] + " " + request[1] + ": " + answer.body()).isEqualTo(400);
            assertThat(answer.headers().firstValue("Content-Type")).hasValue("application/problem+json");
            assertThat(answer.body()).contains("\"status\":400",
                    "the query string is not valid percent-encoded UTF-8", "encode");
        }
        assertThat(output.getOut() + output.getErr()).as("no fault of the service").doesNotContain(" ERROR ",
                "Request failed");
    }

    /**
     * The created order's address is the order's, whatever the POST carried besides its path: a query (whose escapes
     * were encoded a second time, %2F as %252F) or a path parameter are no part of it.
     */
    @Test
    void theLocationOfACreatedOrderIsTheOrdersAddressAlone() throws Exception {
        for (String path : new String[] {"/orders?source=web&ref=a%2Fb", "/orders;jsessionid=abc"}) {
            String orderId = "located-" + UUID.randomUUID();
            HttpResponse<String> created = send("POST", path, "{\"orderId\":\"" + orderId + "\",\"customer\":\"c\"}");
            assertThat(created.statusCode()).as(path + ": " + created.body()).isEqualTo(201);
            assertThat(created.headers().firstValue("Location")).as(path)
                    .hasValue("http://127.0.0.1:" + port + "/orders/" + orderId);
        }
    }

    private HttpResponse<String> send(String method, String path) throws Exception {
        return send(method, path, null);
    }

    private HttpResponse<String> send(String method, String path, String json) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
        if (json != null) {
            request.header("Content-Type", "application/json");
        }
        return http.send(request.method(method, json == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
