package io.dynamolock.bench;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;

/**
 * What every scenario runs on: DynamoDB Local as a server on 127.0.0.1 (telemetry off), metered clients for
 * this JVM's contenders, second metered clients for a holder whose requests must not be counted, and the
 * worker JVM.
 */
final class Env implements AutoCloseable {

    /** Acquires wait this long at most: far past any wait a run produces, so none gives up. */
    static final Duration WAIT = Duration.ofSeconds(120);

    final Options options;
    final LocalDynamoDb server;
    final URI endpoint;
    final MeteredNetwork network;
    final Clients clients;
    final MeteredNetwork holderNetwork;
    final Clients holderClients;
    /** The worker JVM of the scenarios that split contenders over two JVMs; process 1. */
    final RemoteJvm remote;

    /**
     * @param quick     shorter runs, for development (under 2 minutes in all)
     * @param roundTrip the simulated network round trip of every request
     * @param out       where the report goes
     * @param renewal   the renewal-capacity scenario's settings
     */
    record Options(boolean quick, Duration roundTrip, Path out, RenewalCapacityScenario.Settings renewal) {

        Duration scaled(Duration full, Duration quickly) {
            return quick ? quickly : full;
        }
    }

    Env(Options options) throws Exception {
        this.options = options;
        this.server = LocalDynamoDb.start();
        this.endpoint = server.endpoint();
        this.network = new MeteredNetwork(options.roundTrip());
        this.clients = Clients.create(endpoint, network);
        this.holderNetwork = new MeteredNetwork(options.roundTrip());
        this.holderClients = Clients.create(endpoint, holderNetwork);
        this.remote = new RemoteJvm(endpoint, options.roundTrip(), 1);
    }

    @Override
    public void close() throws Exception {
        remote.close();
        clients.close();
        holderClients.close();
        server.close();
    }
}
