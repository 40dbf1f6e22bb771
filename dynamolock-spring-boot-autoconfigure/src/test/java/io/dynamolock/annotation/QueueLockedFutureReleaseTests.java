package io.dynamolock.annotation;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.autoconfigure.DynamoDbLocalProperties;
import io.dynamolock.autoconfigure.DynamoLockAutoConfiguration;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockLostException;
import io.dynamolock.core.LockListener;
import io.dynamolock.core.test.DynamoDbLocal;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import reactor.core.scheduler.Schedulers;

/** Where the release of a {@code @QueueLocked} CompletableFuture method's lock (a DynamoDB request) is made. */
class QueueLockedFutureReleaseTests {

    private static final DynamoDbLocal LOCAL = DynamoDbLocal.shared();

    private static final String TABLE = LOCAL.newLockTable();

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DynamoLockAutoConfiguration.class))
            .withPropertyValues(DynamoDbLocalProperties.of(TABLE))
            .withBean(ReleaseThreads.class)
            .withBean(Async.class);

    /**
     * The method's future is completed on a non-blocking thread (a Netty event loop completing a WebClient
     * call's toFuture(), a parallel scheduler): the release request must not be made there.
     */
    @Test
    void theReleaseIsNotMadeOnTheNonBlockingThreadThatCompletesTheFuture() throws Exception {
        contextRunner.run(context -> {
            CompletableFuture<String> gate = new CompletableFuture<>();
            CompletableFuture<String> result = context.getBean(Async.class).call("cf-nb", gate);
            Schedulers.parallel().schedule(() -> gate.complete("done"));
            assertThat(result.get(20, TimeUnit.SECONDS)).isEqualTo("done");
            ReleaseThreads releases = context.getBean(ReleaseThreads.class);
            assertThat(releases.thread).as("the release was made").isNotNull();
            assertThat(releases.nonBlocking).as("release request made on non-blocking thread " + releases.thread)
                    .isFalse();
        });
    }

    /**
     * The future's work failed with a loss before the grant of a lock it asked for (a nested wait broken, say): the
     * work ran, so the caller is not told "never granted", which would invite a blind retry.
     */
    @Test
    void aLossBeforeANestedGrantFailsTheFutureAsGranted() {
        contextRunner.run(context -> {
            CompletableFuture<String> gate = new CompletableFuture<>();
            CompletableFuture<String> result = context.getBean(Async.class).call("cf-lost", gate);
            LockLostException nested = LockLostException.beforeGrant("the nested wait lost its place");
            gate.completeExceptionally(nested);
            assertThat(result).failsWithin(Duration.ofSeconds(20)).withThrowableOfType(ExecutionException.class)
                    .havingCause().isInstanceOfSatisfying(LockLostException.class, lost -> {
                        assertThat(lost.wasGranted()).isTrue();
                        assertThat(lost).hasCause(nested);
                    });
        });
    }

    static class ReleaseThreads implements LockListener {
        volatile String thread;
        volatile boolean nonBlocking;

        @Override
        public void onReleased(LockHandle lock, Duration held) {
            thread = Thread.currentThread().getName();
            nonBlocking = Schedulers.isInNonBlockingThread();
        }
    }

    static class Async {
        @QueueLocked(entity = "#id", maxWait = "10s")
        public CompletableFuture<String> call(String id, CompletableFuture<String> gate) {
            return gate;
        }
    }
}
