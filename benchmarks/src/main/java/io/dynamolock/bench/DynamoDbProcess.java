package io.dynamolock.bench;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * DynamoDB Local in memory in a process of its own, on a free port of 127.0.0.1: a benchmark that measures this
 * JVM's threads and heap must not count DynamoDB Local's. Telemetry is off (it would try to reach AWS).
 */
final class DynamoDbProcess implements AutoCloseable {

    private final Process process;
    private final URI endpoint;

    private DynamoDbProcess(Process process, URI endpoint) {
        this.process = process;
        this.endpoint = endpoint;
    }

    static DynamoDbProcess start() throws IOException {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        Process process = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"), "-Xmx1g", "-cp",
                System.getProperty("java.class.path"), "com.amazonaws.services.dynamodbv2.local.main.ServerRunner",
                "-inMemory", "-port", Integer.toString(port), "-disableTelemetry").inheritIO().start();
        return new DynamoDbProcess(process, URI.create("http://127.0.0.1:" + port));
    }

    URI endpoint() {
        return endpoint;
    }

    /** Returns once the server answers {@code client} (it takes a few seconds to start). */
    void awaitServing(DynamoDbClient client) throws InterruptedException {
        for (int i = 0; ; i++) {
            try {
                client.listTables();
                return;
            }
            catch (RuntimeException notYet) {
                if (i > 100) {
                    throw notYet;
                }
                TimeUnit.MILLISECONDS.sleep(200);
            }
        }
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }
}
