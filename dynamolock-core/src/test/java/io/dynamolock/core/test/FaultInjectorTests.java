package io.dynamolock.core.test;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/** The fault injector itself: its faults cost the client nothing they would not cost it in production. */
class FaultInjectorTests {

    /**
     * A lost answer, injected after the request was applied, left the answer unread: its pooled connection was never
     * given back, and past the pool's size (50) every request of the client timed out waiting for one.
     */
    @Test
    void lostAnswersDoNotUseUpTheClientsConnections() {
        FaultInjector faults = new FaultInjector();
        try (DynamoDbClient client = faults.clientFor(DynamoDbLocal.shared(), 1)) {
            faults.failAlways(FaultInjector.Step.OTHER, FaultInjector.Fault.LOST_RESPONSE);
            for (int i = 0; i < 60; i++) {
                assertThatThrownBy(client::listTables).as("lost answer %d", i).isInstanceOf(SdkClientException.class)
                        .hasMessageContaining("Injected: connection reset");
            }
            faults.clear();
            assertThatCode(client::listTables).doesNotThrowAnyException();
        }
    }
}
