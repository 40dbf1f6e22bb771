package io.dynamolock.core.test;

import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import io.dynamolock.core.TableBootstrap;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.util.List;
import java.util.UUID;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClientBuilder;

/**
 * DynamoDB Local as a server on 127.0.0.1 (a free port), one per test JVM, with real SDK
 * clients so that interceptors see every request. Telemetry is off: it would try to
 * reach AWS, which these machines cannot.
 */
public final class DynamoDbLocal {

    private static DynamoDbLocal shared;

    private final DynamoDBProxyServer server;
    private final int port;

    private DynamoDbLocal(int port) throws Exception {
        this.port = port;
        this.server = ServerRunner.createServerFromCommandLineArgs(
                new String[] {"-inMemory", "-port", Integer.toString(port), "-disableTelemetry"});
        server.start();
    }

    /** The JVM's shared server, started on first use and stopped when the JVM exits. */
    public static synchronized DynamoDbLocal shared() {
        if (shared == null) {
            shared = start();
            Runtime.getRuntime().addShutdownHook(new Thread(shared::stop, "dynamodb-local-stop"));
        }
        return shared;
    }

    /** A server of its own, e.g. for a test that stops it. */
    public static DynamoDbLocal start() {
        try {
            return new DynamoDbLocal(freePort());
        }
        catch (Exception ex) {
            throw new IllegalStateException("Could not start DynamoDB Local", ex);
        }
    }

    public int port() {
        return port;
    }

    public URI endpoint() {
        return URI.create("http://127.0.0.1:" + port);
    }

    public DynamoDbClient client(ExecutionInterceptor... interceptors) {
        return clientBuilder()
                .overrideConfiguration(c -> c.executionInterceptors(List.of(interceptors)))
                .build();
    }

    /**
     * A client builder aimed at this server (endpoint, region, credentials set), for tests that
     * also set retries, timeouts or interceptors themselves.
     */
    public DynamoDbClientBuilder clientBuilder() {
        return DynamoDbClient.builder()
                .endpointOverride(endpoint())
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")));
    }

    /** A new lock table with a unique name, so tests do not see each other's locks. */
    public String newLockTable() {
        String name = "locks-" + UUID.randomUUID().toString().substring(0, 8);
        try (DynamoDbClient client = client()) {
            TableBootstrap.of(client, name).createIfMissing();
        }
        return name;
    }

    public void stop() {
        try {
            server.stop();
        }
        catch (Exception ex) {
            // The JVM is going down or the test is done with it.
        }
    }

    public static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
