package io.dynamolock.core.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.LockWaitTimeoutException;
import io.dynamolock.core.test.FaultInjector.Fault;
import io.dynamolock.core.test.FaultInjector.Step;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.retries.StandardRetryStrategy;
import software.amazon.awssdk.retries.api.BackoffStrategy;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * A poll given the rest of a wait that ends in ApiCallTimeoutException because its retries (throttling) ran out the
 * time is a failure of the table, not a poll cut short by the deadline: the time-out names it (README, faults).
 */
class ThrottledPollTests extends FaultyTemplateTestSupport {

    LockTemplate waitersOf(DynamoDbClient c) {
        return LockTemplate.builder(c).tableName(table).ownerName(faultyOwner)
                .leaseDuration(Duration.ofSeconds(60)).heartbeatInterval(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(50), Duration.ofSeconds(1)).build();
    }

    /** README faults table: polls that keep failing -> time-out with the last failure as its cause. */
    @Test
    void throttledPollsWithARealisticBackoffAreTheTimeOutsCause() {
        StandardRetryStrategy retries = AwsRetryStrategy.standardRetryStrategy().toBuilder()
                .maxAttempts(10)
                .backoffStrategy(BackoffStrategy.fixedDelay(Duration.ofMillis(500)))
                .throttlingBackoffStrategy(BackoffStrategy.fixedDelay(Duration.ofMillis(1000)))
                .circuitBreakerEnabled(false)
                .build();
        DynamoDbClient c = dynamo.clientBuilder()
                .overrideConfiguration(o -> o.executionInterceptors(List.of(faults)).retryStrategy(retries))
                .build();
        LockTemplate waiters = waitersOf(c);
        LockHandle holder = clean.acquire(entity, LONG);
        try {
            faults.failAlways(Step.READ, Fault.THROTTLE_BEFORE);
            LockWaitTimeoutException timedOut = catchThrowableOfType(LockWaitTimeoutException.class,
                    () -> waiters.acquire(entity, Duration.ofSeconds(3)));
            assertThat(timedOut).isNotNull();
            assertThat(faults.injected(Step.READ)).as("throttled poll attempts").isGreaterThanOrEqualTo(2);
            assertThat(timedOut.getCause()).as("the time-out names the throttling (README)").isNotNull();
        }
        finally {
            faults.clear();
            holder.release();
            waiters.close();
            c.close();
        }
    }
}
