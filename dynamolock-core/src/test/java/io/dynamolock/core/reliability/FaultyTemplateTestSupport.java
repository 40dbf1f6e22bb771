package io.dynamolock.core.reliability;

import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.test.FaultInjector;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Two templates on one lock table: {@code faulty}, whose client goes through a {@link FaultInjector} (3 attempts
 * per call), and {@code clean}, which plays the other processes; a fresh entity per test.
 */
abstract class FaultyTemplateTestSupport extends LockTableTestSupport {

    static final int ATTEMPTS = 3;
    static final Duration LEASE = Duration.ofSeconds(2);
    static final Duration HEARTBEAT = Duration.ofMillis(500);
    static final Duration LONG = Duration.ofSeconds(30);

    final FaultInjector faults = new FaultInjector();
    DynamoDbClient faultyClient;
    LockTemplate faulty;
    LockTemplate clean;
    String faultyOwner;
    String entity;

    @BeforeEach
    void templates() {
        faultyClient = faults.clientFor(dynamo, ATTEMPTS);
        faultyOwner = "faulty-" + UUID.randomUUID().toString().substring(0, 8);
        faulty = InjectedFaultTests.template(faultyClient, faultyOwner, LEASE);
        clean = InjectedFaultTests.template(client, "clean-" + UUID.randomUUID().toString().substring(0, 8), LEASE);
        entity = "entity-" + UUID.randomUUID();
    }

    @AfterEach
    void close() {
        faults.clear();
        faulty.close();
        clean.close();
        faultyClient.close();
    }
}
