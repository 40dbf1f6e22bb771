package io.dynamolock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockInterruptedException;
import io.dynamolock.core.LockMode;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.LockWaitTimeoutException;
import io.dynamolock.core.test.DynamoDbLocal;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
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
                    .hasNumberOfObservationsWithNameEqualTo("dynamolock.lock.acquire", 2)
                    .hasAnObservation(observation -> observation.hasNameEqualTo("dynamolock.lock.acquire")
                            .hasLowCardinalityKeyValue("outcome", "acquired")
                            .hasLowCardinalityKeyValue("namespace", "default")
                            .hasLowCardinalityKeyValue("mode", "exclusive")
                            .hasHighCardinalityKeyValue("entity", "observed")
                            .hasParentObservationEqualTo(request))
                    .hasAnObservation(observation -> observation.hasNameEqualTo("dynamolock.lock.acquire")
                            .hasLowCardinalityKeyValue("outcome", "timeout"))
                    .hasAnObservation(observation -> observation.hasNameEqualTo("dynamolock.lock.hold")
                            .hasLowCardinalityKeyValue("outcome", "released")
                            .doesNotHaveLowCardinalityKeyValueWithKey("entity"));
            TestObservationRegistryAssert.assertThat(registry).hasObservationWithNameEqualTo("dynamolock.lock.hold").that()
                    .hasBeenStopped();
        });
    }

    /**
     * With Actuator, Boot meters every observation (a timer of the observation's name, and a long task timer) beside
     * {@link LockMetricsListener}'s own meters. An observation named like one of those meters would count each
     * acquisition twice in it, under other tag keys than the meter's, which Prometheus refuses.
     */
    @Test
    void anApplicationWithMetricsAndObservationsCountsEachAcquisitionOnceAndNamesNoMeterTwice() {
        contextRunner.withConfiguration(AutoConfigurations.of(ObservationAutoConfiguration.class,
                        MetricsAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class,
                        SimpleMetricsExportAutoConfiguration.class, DynamoLockMetricsAutoConfiguration.class))
                .run(context -> {
                    assertThat(context).hasSingleBean(LockObservationListener.class)
                            .hasSingleBean(LockMetricsListener.class);
                    LockTemplate locks = context.getBean(LockTemplate.class);
                    MeterRegistry meters = context.getBean(MeterRegistry.class);
                    try (LockHandle lock = locks.acquire("metered-once", Duration.ZERO)) {
                        assertThat(locks.tryAcquire(LockRequest.builder("metered-once").reentrant(false).build()))
                                .isEmpty();
                    }

                    assertThat(count(meters, "dynamolock.acquire", "acquired")).as("one acquisition").isEqualTo(1);
                    assertThat(count(meters, "dynamolock.acquire", "timeout")).as("one time-out").isEqualTo(1);
                    assertThat(count(meters, "dynamolock.held", null)).as("one hold").isEqualTo(1);
                    assertThat(count(meters, "dynamolock.lock.acquire", "acquired")).as("the observation, metered")
                            .isEqualTo(1);
                    Map<String, Set<Set<String>>> tagKeysByName = meters.getMeters().stream()
                            .filter(meter -> meter.getId().getName().startsWith("dynamolock."))
                            .collect(Collectors.groupingBy(meter -> meter.getId().getName(),
                                    Collectors.mapping(DynamoLockObservationAutoConfigurationTests::tagKeys,
                                            Collectors.toSet())));
                    assertThat(tagKeysByName).as("the observations are metered too").isNotEmpty()
                            .allSatisfy((name, tagKeys) -> assertThat(tagKeys).as("tag keys of the meters named %s",
                                    name).hasSize(1));
                });
    }

    /** The count of the timers named {@code name} with that {@code outcome} (any, if null), whatever their tags. */
    private static long count(MeterRegistry meters, String name, String outcome) {
        return (outcome == null ? meters.find(name) : meters.find(name).tag("outcome", outcome)).timers().stream()
                .mapToLong(Timer::count).sum();
    }

    private static Set<String> tagKeys(Meter meter) {
        return meter.getId().getTags().stream().map(Tag::getKey).collect(Collectors.toSet());
    }

    @Test
    void stopsTheObservationOfAnAsynchronousAcquisitionWithItsOutcomeOnWhateverThreadItEnds() {
        contextRunner.withBean(TestObservationRegistry.class, TestObservationRegistry::create).run(context -> {
            List<String> stopped = new CopyOnWriteArrayList<>();
            context.getBean(TestObservationRegistry.class).observationConfig().observationHandler(
                    new ObservationHandler<>() {
                        @Override
                        public boolean supportsContext(Observation.Context observed) {
                            return true;
                        }

                        @Override
                        public void onStop(Observation.Context observed) {
                            stopped.add(observed.getName() + " " + observed.getLowCardinalityKeyValue("mode").getValue()
                                    + " " + observed.getLowCardinalityKeyValue("outcome").getValue());
                        }
                    });
            LockTemplate locks = context.getBean(LockTemplate.class);
            // Both outcomes are reported on a dynamolock thread, not on this one, which started both.
            LockHandle reader = locks.acquireAsync(LockRequest.builder("async-observed").mode(LockMode.SHARED)
                    .build()).get(30, TimeUnit.SECONDS);
            CompletableFuture<LockHandle> writer = locks.acquireAsync(LockRequest.builder("async-observed")
                    .wait(Duration.ofMillis(200)).build());
            assertThatThrownBy(() -> writer.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(LockWaitTimeoutException.class);
            reader.release();

            assertThat(stopped).as("every observation stopped, each with its own mode and outcome")
                    .containsExactlyInAnyOrder("dynamolock.lock.acquire shared acquired",
                            "dynamolock.lock.acquire exclusive timeout", "dynamolock.lock.hold shared released");
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
                    .hasNameEqualTo("dynamolock.lock.acquire")
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
