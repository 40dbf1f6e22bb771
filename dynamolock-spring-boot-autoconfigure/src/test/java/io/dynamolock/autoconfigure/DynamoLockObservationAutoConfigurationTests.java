package io.dynamolock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockInterruptedException;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.LockWaitTimeoutException;
import io.dynamolock.core.test.DynamoDbLocal;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** Acquisitions and holds as observations on the application's {@link ObservationRegistry}. */
class DynamoLockObservationAutoConfigurationTests {

    private static final String TABLE = DynamoDbLocal.shared().newLockTable();

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DynamoLockAutoConfiguration.class,
                    DynamoLockObservationAutoConfiguration.class))
            .withPropertyValues(DynamoDbLocalProperties.of(TABLE));

    @Test
    void observesAcquisitionsAndHoldsWithTheirOutcomes() {
        contextRunner.withBean(TestObservationRegistry.class, TestObservationRegistry::create).run(context -> {
            assertThat(context).hasSingleBean(LockObservationListener.class);
            TestObservationRegistry registry = context.getBean(TestObservationRegistry.class);
            LockTemplate locks = context.getBean(LockTemplate.class);
            Observation request = Observation.start("http.request", registry);
            try (Observation.Scope scope = request.openScope();
                    LockHandle lock = locks.acquire("observed", Duration.ZERO)) {
                assertThat(locks.tryAcquire(LockRequest.builder("observed").reentrant(false).build())).isEmpty();
            }
            request.stop();

            TestObservationRegistryAssert.assertThat(registry)
                    .hasNumberOfObservationsWithNameEqualTo("dynamolock.acquire", 2)
                    .hasAnObservation(observation -> observation.hasNameEqualTo("dynamolock.acquire")
                            .hasLowCardinalityKeyValue("outcome", "acquired")
                            .hasLowCardinalityKeyValue("namespace", "default")
                            .hasLowCardinalityKeyValue("mode", "exclusive")
                            .hasHighCardinalityKeyValue("entity", "observed")
                            .hasParentObservationEqualTo(request))
                    .hasAnObservation(observation -> observation.hasNameEqualTo("dynamolock.acquire")
                            .hasLowCardinalityKeyValue("outcome", "timeout"))
                    .hasAnObservation(observation -> observation.hasNameEqualTo("dynamolock.hold")
                            .hasLowCardinalityKeyValue("outcome", "released")
                            .doesNotHaveLowCardinalityKeyValueWithKey("entity"));
            TestObservationRegistryAssert.assertThat(registry).hasObservationWithNameEqualTo("dynamolock.hold").that()
                    .hasBeenStopped();
        });
    }

    @Test
    void stopsTheObservationOfAnAsyncAcquisitionWhoseOutcomeComesOnAnotherThread() {
        contextRunner.withBean(TestObservationRegistry.class, TestObservationRegistry::create).run(context -> {
            TestObservationRegistry registry = context.getBean(TestObservationRegistry.class);
            List<String> started = new CopyOnWriteArrayList<>();
            List<String> stopped = new CopyOnWriteArrayList<>();
            registry.observationConfig().observationHandler(new ObservationHandler<>() {
                @Override
                public void onStart(Observation.Context observed) {
                    started.add(observed.getName());
                }

                @Override
                public void onStop(Observation.Context observed) {
                    stopped.add(observed.getName());
                }

                @Override
                public boolean supportsContext(Observation.Context observed) {
                    return true;
                }
            });
            LockTemplate locks = context.getBean(LockTemplate.class);
            LockHandle holder = locks.acquire("async-observed", Duration.ZERO);
            // Waits behind the holder, so its outcome comes on a dynamolock thread, not on this one.
            CompletableFuture<LockHandle> waiting = locks.acquireAsync(LockRequest.builder("async-observed").wait(Duration.ofSeconds(30)).build());
            holder.release();
            waiting.get(30, TimeUnit.SECONDS).release();
            try (LockHandle blocker = locks.acquire("async-observed", Duration.ZERO)) {
                CompletableFuture<LockHandle> timingOut = locks.acquireAsync(
                        LockRequest.builder("async-observed").wait(Duration.ofMillis(50)).build());
                assertThatThrownBy(() -> timingOut.get(30, TimeUnit.SECONDS))
                        .hasCauseInstanceOf(LockWaitTimeoutException.class);
            }

            assertThat(started).containsExactlyInAnyOrder("dynamolock.acquire", "dynamolock.acquire",
                    "dynamolock.acquire", "dynamolock.acquire", "dynamolock.hold", "dynamolock.hold", "dynamolock.hold");
            assertThat(stopped).as("every observation started is stopped").containsExactlyInAnyOrderElementsOf(started);
            TestObservationRegistryAssert.assertThat(registry).hasAnObservation(observation -> observation.hasNameEqualTo("dynamolock.acquire")
                            .hasLowCardinalityKeyValue("outcome", "timeout"));
        });
    }

    @Test
    void tagsAFailedAcquisitionWithItsOutcomeAndError() {
        contextRunner.withBean(TestObservationRegistry.class, TestObservationRegistry::create).run(context -> {
            TestObservationRegistry registry = context.getBean(TestObservationRegistry.class);
            Thread.currentThread().interrupt();
            try {
                assertThatThrownBy(() -> context.getBean(LockTemplate.class).acquire("interrupted", Duration.ofSeconds(5)))
                        .isInstanceOf(LockInterruptedException.class);
            }
            finally {
                Thread.interrupted();
            }
            TestObservationRegistryAssert.assertThat(registry).hasSingleObservationThat()
                    .hasNameEqualTo("dynamolock.acquire")
                    .hasLowCardinalityKeyValue("outcome", "interrupted")
                    .hasError()
                    .hasBeenStopped();
        });
    }

    @Test
    void backsOffWithoutARegistryOrWhenTheApplicationDefinesItsListener() {
        contextRunner.run(context -> assertThat(context).doesNotHaveBean(LockObservationListener.class));
        contextRunner.withClassLoader(new FilteredClassLoader(ObservationRegistry.class))
                .run(context -> assertThat(context).doesNotHaveBean(LockObservationListener.class));
        LockObservationListener own = new LockObservationListener(ObservationRegistry.NOOP);
        contextRunner.withBean(TestObservationRegistry.class, TestObservationRegistry::create)
                .withBean(LockObservationListener.class, () -> own)
                .run(context -> assertThat(context.getBean(LockObservationListener.class)).isSameAs(own));
    }
}
