package io.dynamolock.bench;

import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;

/**
 * DynamoDB Local in memory as a server on 127.0.0.1, on a free port. Telemetry is off: it would try to reach AWS,
 * which this machine cannot. (The core's test fixture does the same, but a test-jar cannot be a compile
 * dependency without breaking {@code mvn compile} and {@code mvn test} of the whole build.)
 */
final class LocalDynamoDb implements AutoCloseable {

    private final DynamoDBProxyServer server;
    private final int port;

    private LocalDynamoDb(DynamoDBProxyServer server, int port) {
        this.server = server;
        this.port = port;
    }

    static LocalDynamoDb start() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        DynamoDBProxyServer server = ServerRunner.createServerFromCommandLineArgs(
                new String[] {"-inMemory", "-port", Integer.toString(port), "-disableTelemetry"});
        server.start();
        return new LocalDynamoDb(server, port);
    }

    URI endpoint() {
        return URI.create("http://127.0.0.1:" + port);
    }

    @Override
    public void close() throws Exception {
        server.stop();
    }
}
