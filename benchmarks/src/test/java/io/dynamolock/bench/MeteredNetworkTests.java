package io.dynamolock.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The meter behind every "requests per ..." figure, on DynamoDB Local as a server: it counts each competitor's
 * requests by operation, failed conditional writes included, and a worker's meter survives its trip to the main JVM.
 */
class MeteredNetworkTests {

    private static LocalDynamoDb dynamo;
    private static MeteredNetwork network;
    private static Clients clients;

    @BeforeAll
    static void start() throws Exception {
        dynamo = LocalDynamoDb.start();
        network = new MeteredNetwork(Duration.ZERO);
        clients = Clients.create(dynamo.endpoint(), network);
        CompetitorKind.DYNAMOLOCK.createTable(clients);
        CompetitorKind.AWS_DEFAULTS.createTable(clients);
        CompetitorKind.RETRY.createTable(clients);
    }

    @AfterAll
    static void stop() throws Exception {
        clients.close();
        dynamo.close();
    }

    /** The README's "requests per uncontended acquire + release": 2 for dynamolock, 3 for AWS's lock client. */
    @Test
    void countsEveryRequestOfAnUncontendedLockByOperation() throws Exception {
        assertThat(cycle(CompetitorKind.DYNAMOLOCK).requests()).isEqualTo(Map.of("UpdateItem", 2L));
        assertThat(cycle(CompetitorKind.AWS_DEFAULTS).requests()).containsOnlyKeys("GetItem", "PutItem", "DeleteItem")
                .allSatisfy((operation, count) -> assertThat(count).as(operation).isOne());
    }

    /** A refused conditional put is a request, and a failed write that DynamoDB charges as one write unit. */
    @Test
    void countsARefusedConditionalWrite() throws Exception {
        try (Competitor holder = CompetitorKind.RETRY.open(clients);
                Competitor other = CompetitorKind.RETRY.open(clients)) {
            Competitor.Handle held = holder.acquire("busy", Env.WAIT);
            network.reset();
            assertThatThrownBy(() -> other.acquire("busy", Duration.ZERO)).isInstanceOf(TimeoutException.class);
            Meter meter = network.snapshot();
            held.release();

            assertThat(meter.requests()).isEqualTo(Map.of("PutItem", 1L));
            assertThat(meter.failedWrites()).isOne();
            assertThat(meter.writeUnits()).isEqualTo(1.0);
            assertThat(Meter.decode(meter.encode())).as("as a worker JVM reports it").isEqualTo(meter);
        }
    }

    private static Meter cycle(CompetitorKind kind) throws Exception {
        try (Competitor competitor = kind.open(clients)) {
            competitor.acquire("warm-" + kind.id, Env.WAIT).release();
            network.reset();
            competitor.acquire("cycle-" + kind.id, Env.WAIT).release();
            return network.snapshot();
        }
    }
}
