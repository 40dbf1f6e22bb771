package io.dynamolock.samples.orders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assumptions.assumeThat;

import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import java.io.IOException;
import java.net.ConnectException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.bootstrap.DefaultBootstrapContext;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.event.ApplicationEnvironmentPreparedEvent;
import org.springframework.boot.context.event.ApplicationFailedEvent;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * When the app starts DynamoDB Local itself, and when it leaves the settings alone: the README's "against real
 * DynamoDB it is only configuration" must mean that a region given on the command line or in the environment is
 * the region used, not one DynamoDB Local's settings override.
 */
class EmbeddedDynamoDbTests {

    @Test
    void aRegionOnTheCommandLineIsRealDynamoDbNotTheEmbeddedOne() {
        try (ConfigurableApplicationContext context = startListenerOnly(new StandardEnvironment(),
                "--" + EmbeddedDynamoDb.REGION + "=eu-west-1")) {
            assertLeftToAws(context.getEnvironment(), "eu-west-1");
        }
    }

    @Test
    void aRegionInTheEnvironmentIsRealDynamoDbNotTheEmbeddedOne() {
        StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().replace(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                        Map.of("DYNAMOLOCK_DYNAMODB_REGION", "eu-central-1")));
        try (ConfigurableApplicationContext context = startListenerOnly(environment)) {
            assertLeftToAws(context.getEnvironment(), "eu-central-1");
        }
    }

    @Test
    void embeddedDynamoDbCanBeTurnedOff() {
        try (ConfigurableApplicationContext context = startListenerOnly(new StandardEnvironment(),
                "--sample.embedded-dynamodb.enabled=false")) {
            assertLeftToAws(context.getEnvironment(), null);
        }
    }

    /** A blank region is unset for the starter (the AWS default chain), so it is no reason to skip the server. */
    @Test
    void aBlankRegionStillStartsTheEmbeddedOne() {
        try (ConfigurableApplicationContext context = startListenerOnly(new StandardEnvironment(),
                "--" + EmbeddedDynamoDb.REGION + "=")) {
            assertThat(context.getEnvironment().getProperty(EmbeddedDynamoDb.ENDPOINT)).startsWith("http://127.0.0.1:");
            assertThat(context.getEnvironment().getProperty(EmbeddedDynamoDb.REGION)).isEqualTo("us-east-1");
        }
    }

    /** A blank endpoint is unset too (the README: an empty value is unset for every property): no reason to skip. */
    @Test
    void aBlankEndpointStillStartsTheEmbeddedOne() {
        try (ConfigurableApplicationContext context = startListenerOnly(new StandardEnvironment(),
                "--" + EmbeddedDynamoDb.ENDPOINT + "=")) {
            assertThat(context.getEnvironment().getProperty(EmbeddedDynamoDb.ENDPOINT)).startsWith("http://127.0.0.1:");
            assertThat(context.getEnvironment().getProperty(EmbeddedDynamoDb.REGION)).isEqualTo("us-east-1");
        }
    }

    /**
     * LocalStack or DynamoDB Local started by hand, with nothing in it: the endpoint is all the README asks for, so
     * the app creates the lock table as it creates its orders table.
     */
    @Test
    void anEndpointOfAFreshDynamoDbIsAllTheAppNeeds() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        DynamoDBProxyServer server = ServerRunner.createServerFromCommandLineArgs(
                new String[] {"-inMemory", "-port", Integer.toString(port), "-disableTelemetry"});
        server.start();
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(OrderServiceApplication.class)
                .run("--server.port=0", "--sample.demo.enabled=false",
                        "--" + EmbeddedDynamoDb.ENDPOINT + "=http://127.0.0.1:" + port)) {
            OrderApi api = new OrderApi(Integer.parseInt(context.getEnvironment().getProperty("local.server.port")));
            api.create("fresh-order");
            api.addItem("fresh-order", "book", 100);
            assertThat(api.itemCount("fresh-order")).isEqualTo(1);
        }
        finally {
            server.stop();
        }
    }

    /**
     * Another program (a second copy of the sample started at the same moment, say) takes the port DynamoDB Local
     * was about to listen on: with no port chosen by the user the start goes on, on another free port. The hook
     * takes the ports of the first two attempts (8000 where it is free, then a free one) just before the server
     * binds them.
     */
    @Test
    void aPortTakenJustBeforeTheStartIsReplacedByAnotherFreeOne() throws Exception {
        List<Integer> tried = new ArrayList<>();
        List<ServerSocket> taken = new ArrayList<>();
        EmbeddedDynamoDb listener = new EmbeddedDynamoDb(port -> {
            tried.add(port);
            if (tried.size() <= 2) {
                occupy(port).ifPresent(taken::add);
            }
        });
        StandardEnvironment environment = new StandardEnvironment();
        try {
            prepare(listener, environment);
            URI endpoint = URI.create(environment.getProperty(EmbeddedDynamoDb.ENDPOINT));
            assertThat(tried).as("the ports tried").hasSize(3).doesNotHaveDuplicates();
            assertThat(endpoint.getPort()).isEqualTo(tried.get(2));
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), endpoint.getPort()), 2_000);
            }
        }
        finally {
            fail(listener);
            for (ServerSocket socket : taken) {
                socket.close();
            }
        }
    }

    /** Retrying is bounded: where every port is taken, the start fails after a few attempts and says so. */
    @Test
    void aStartWhosePortsAreAllTakenFailsAfterAFewAttempts() throws Exception {
        List<Integer> tried = new ArrayList<>();
        List<ServerSocket> taken = new ArrayList<>();
        EmbeddedDynamoDb listener = new EmbeddedDynamoDb(port -> {
            tried.add(port);
            occupy(port).ifPresent(taken::add);
        });
        StandardEnvironment environment = new StandardEnvironment();
        try {
            assertThatIllegalStateException().isThrownBy(() -> prepare(listener, environment))
                    .withMessageContaining("taken")
                    .withMessageContaining(tried.get(tried.size() - 1).toString());
            assertThat(tried).as("the ports tried").hasSize(5);
            assertThat(environment.getProperty(EmbeddedDynamoDb.ENDPOINT)).isNull();
        }
        finally {
            fail(listener);
            for (ServerSocket socket : taken) {
                socket.close();
            }
        }
    }

    /**
     * A port the user chose is the port the user's other tools (a second copy, a CLI) are pointed at: when it is
     * taken the start fails, naming the port and the property, rather than run elsewhere unnoticed.
     */
    @Test
    void anExplicitPortThatIsTakenFailsTheStartNamingThePortAndTheProperty() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            String port = Integer.toString(taken.getLocalPort());
            assertThatIllegalStateException()
                    .isThrownBy(() -> new SpringApplicationBuilder(NoBeans.class).web(WebApplicationType.NONE)
                            .run("--sample.embedded-dynamodb.port=" + port).close())
                    .withMessageContaining("port " + port)
                    .withMessageContaining("sample.embedded-dynamodb.port")
                    .withMessageContaining("taken");
        }
    }

    /** Takes {@code port} on 127.0.0.1, as another program would; empty where one already has it. */
    private static Optional<ServerSocket> occupy(int port) {
        try {
            return Optional.of(new ServerSocket(port, 1, InetAddress.getLoopbackAddress()));
        }
        catch (IOException alreadyTaken) {
            return Optional.empty();
        }
    }

    private static void prepare(EmbeddedDynamoDb listener, ConfigurableEnvironment environment) {
        listener.onApplicationEvent(new ApplicationEnvironmentPreparedEvent(new DefaultBootstrapContext(),
                new SpringApplication(), new String[0], environment));
    }

    /** A failed start, after which the listener stops the server it started, if any. */
    private static void fail(EmbeddedDynamoDb listener) {
        listener.onApplicationEvent(new ApplicationFailedEvent(new SpringApplication(), new String[0], null,
                new IllegalStateException("the test is over")));
    }

    private static void assertLeftToAws(ConfigurableEnvironment environment, String region) {
        assertThat(environment.getProperty(EmbeddedDynamoDb.REGION)).isEqualTo(region);
        assertThat(environment.getPropertySources().contains("embeddedDynamoDb")).as("DynamoDB Local started").isFalse();
        assertThat(environment.getProperty(EmbeddedDynamoDb.ENDPOINT)).isNull();
        assertThat(environment.getProperty("dynamolock.dynamodb.access-key-id")).isNull();
    }

    /**
     * The server holds the lock table and the orders and takes any credentials: it listens on 127.0.0.1 only, not on
     * the machine's other addresses (DynamoDB Local's own default is every interface), and it lets no web page's
     * script read it (DynamoDB Local's own CORS default is any origin).
     */
    @Test
    void theServerIsReachableFromThisMachineOnlyAndByNoWebPage() throws Exception {
        try (ConfigurableApplicationContext context = startListenerOnly(new StandardEnvironment())) {
            URI endpoint = URI.create(context.getEnvironment().getProperty(EmbeddedDynamoDb.ENDPOINT));
            HttpResponse<String> fromAPage = HttpClient.newHttpClient().send(HttpRequest.newBuilder(endpoint)
                    .POST(HttpRequest.BodyPublishers.ofString("{}"))
                    .header("Origin", "https://evil.example")
                    .header("Content-Type", "application/x-amz-json-1.0")
                    .header("X-Amz-Target", "DynamoDB_20120810.ListTables")
                    .header("Authorization", "AWS4-HMAC-SHA256"
                            + " Credential=local/20261124/us-east-1/dynamodb/aws4_request,"
                            + " SignedHeaders=host, Signature=0")
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(fromAPage.headers().firstValue("Access-Control-Allow-Origin"))
                    .as("the origins whose scripts may read DynamoDB Local's answers").isEmpty();
            Optional<InetAddress> lan = Collections.list(NetworkInterface.getNetworkInterfaces()).stream()
                    .flatMap(nic -> Collections.list(nic.getInetAddresses()).stream())
                    .filter(address -> address instanceof Inet4Address && !address.isLoopbackAddress())
                    .findFirst();
            assumeThat(lan).as("an address of this machine other than loopback").isPresent();
            try (Socket socket = new Socket()) {
                assertThatExceptionOfType(ConnectException.class)
                        .as("DynamoDB Local at " + lan.get().getHostAddress() + ":" + endpoint.getPort())
                        .isThrownBy(() -> socket.connect(new InetSocketAddress(lan.get(), endpoint.getPort()), 2_000));
            }
        }
    }

    /**
     * The app's environment as {@code OrderServiceApplication} prepares it (application.yml, the listeners of
     * spring.factories), without its beans: a region would otherwise send them to AWS. A server the listener
     * starts anyway (the failure these tests guard against) runs on a free port and stops with the context.
     */
    private static ConfigurableApplicationContext startListenerOnly(ConfigurableEnvironment environment,
            String... args) {
        String[] withFreePort = Stream.concat(Stream.of(args), Stream.of("--sample.embedded-dynamodb.port=0"))
                .toArray(String[]::new);
        return new SpringApplicationBuilder(NoBeans.class).web(WebApplicationType.NONE).environment(environment)
                .run(withFreePort);
    }

    static class NoBeans {
    }
}
