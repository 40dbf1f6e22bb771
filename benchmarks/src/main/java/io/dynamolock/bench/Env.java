package io.dynamolock.bench;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * What every scenario runs on: DynamoDB Local as a server on 127.0.0.1 (telemetry off), a metered client for
 * this JVM's contenders, a second metered client for a holder whose requests must not be counted, and the
 * worker JVM.
 */
final class Env implements AutoCloseable {

    /** Acquires wait this long at most: far past any wait a run produces, so none gives up. */
    static final Duration WAIT = Duration.ofSeconds(120);

    final Options options;
    final LocalDynamoDb server;
    final URI endpoint;
    final MeteredNetwork network;
    final DynamoDbClient client;
    final MeteredNetwork holderNetwork;
    final DynamoDbClient holderClient;
    final RemoteJvm remote;

    /**
     * @param quick     shorter runs, for development (under 2 minutes in all)
     * @param roundTrip the simulated network round trip of every request
     * @param out       where the report goes
     */
    record Options(boolean quick, Duration roundTrip, Path out) {

        Duration scaled(Duration full, Duration quickly) {
            return quick ? quickly : full;
        }
    }

    Env(Options options) throws Exception {
        this.options = options;
        this.server = LocalDynamoDb.start();
        this.endpoint = server.endpoint();
        this.network = new MeteredNetwork(options.roundTrip());
        this.client = Clients.create(endpoint, network);
        this.holderNetwork = new MeteredNetwork(options.roundTrip());
        this.holderClient = Clients.create(endpoint, holderNetwork);
        this.remote = new RemoteJvm(endpoint, options.roundTrip());
    }

    @Override
    public void close() throws Exception {
        remote.close();
        client.close();
        holderClient.close();
        server.close();
    }
}
