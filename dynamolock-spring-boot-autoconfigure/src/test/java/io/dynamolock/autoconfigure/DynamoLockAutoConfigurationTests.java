package io.dynamolock.autoconfigure;

import java.net.InetAddress;
import software.amazon.awssdk.core.exception.ApiCallAttemptTimeoutException;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.SdkResponse;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import java.net.ServerSocket;
import io.dynamolock.core.test.AccessDenied;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dynamolock.annotation.QueueLocked;
import io.dynamolock.annotation.QueueLockedAdvisor;
import io.dynamolock.annotation.QueueLockedConfigurationException;
import io.dynamolock.annotation.QueueLockedMethodValidator;
import io.dynamolock.core.LockAttempt;
import io.dynamolock.core.LockOptionException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.beans.BeanWrapperImpl;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.LazyInitializationBeanFactoryPostProcessor;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.DependsOn;
import org.springframework.mock.env.MockEnvironment;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockInterruptedException;
import io.dynamolock.core.LockListener;
import io.dynamolock.core.LockInfo;
import io.dynamolock.core.LockMode;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTableException;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.test.DynamoDbLocal;
import io.dynamolock.integration.DynamoLockRegistry;
import io.dynamolock.reactive.ReactiveLockTemplate;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.net.DatagramSocket;
import io.dynamolock.core.WakeUpOptions;
import java.util.UUID;
import java.util.function.Function;
import java.security.Principal;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.slf4j.LoggerFactory;
import org.springframework.boot.actuate.autoconfigure.endpoint.PropertiesEndpointAccessResolver;
import org.springframework.boot.actuate.endpoint.OperationFilter;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.context.ApplicationContext;
import org.springframework.core.convert.support.ConfigurableConversionService;
import org.junit.jupiter.api.Test;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.actuate.endpoint.InvocationContext;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.invoke.convert.ConversionServiceParameterValueMapper;
import org.springframework.boot.actuate.endpoint.web.EndpointMediaTypes;
import org.springframework.boot.actuate.endpoint.web.ExposableWebEndpoint;
import org.springframework.boot.actuate.endpoint.web.WebOperation;
import org.springframework.boot.actuate.endpoint.web.annotation.WebEndpointDiscoverer;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.DescribeTableResponse;
import software.amazon.awssdk.services.dynamodb.model.TableStatus;

class DynamoLockAutoConfigurationTests {

    private static final DynamoDbLocal LOCAL = DynamoDbLocal.shared();

    private static final String TABLE = LOCAL.newLockTable();
    /**
     * What a closed client throws: its connection pool is shut ({@code IllegalStateException}), or, once it has call
     * timeouts, its timeout timer first ({@code RejectedExecutionException}).
     */
    @SuppressWarnings("unchecked")
    private static final Class<? extends Throwable>[] CLOSED_CLIENT = new Class[] {IllegalStateException.class,
            java.util.concurrent.RejectedExecutionException.class};

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DynamoLockAutoConfiguration.class,
                    DynamoLockMetricsAutoConfiguration.class, DynamoLockHealthAutoConfiguration.class,
                    DynamoLockEndpointAutoConfiguration.class))
            .withPropertyValues(DynamoDbLocalProperties.of(TABLE));

    @Test
    void aFailClosedJobThatEndsAfterTheContextClosedStillRemovesItsEntryAndTheTemplateThenClosesOurClient()
            throws Exception {
        String entity = "job-" + UUID.randomUUID();
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        CompletableFuture<Object> job = new CompletableFuture<>();
        AtomicReference<DynamoDbClient> client =
                new AtomicReference<>();
        contextRunner.run(context -> {
            LockTemplate locks = context.getBean(LockTemplate.class);
            client.set(context.getBean(DynamoDbClient.class));
            new Thread(() -> {
                try {
                    job.complete(locks.execute(LockRequest.builder(entity).failClosed(true).build(), lock -> {
                        holding.countDown();
                        return finish.await(30, TimeUnit.SECONDS);
                    }));
                }
                catch (Throwable ex) {
                    job.completeExceptionally(ex);
                }
            }).start();
            assertThat(holding.await(30, TimeUnit.SECONDS)).isTrue();
        }); // closed while the job still holds its lock
        finish.countDown();
        assertThat(job.get(30, TimeUnit.SECONDS)).isEqualTo(true);

        assertThat(LOCAL.client().getItem(b -> b.tableName(TABLE).consistentRead(true).key(Map.of(
                "pk", AttributeValue.fromS(entity),
                "sk", AttributeValue.fromS("default"))))
                .item()).as("the lock's item").noneSatisfy((name, value) -> assertThat(name).startsWith("t#"));
        assertThatThrownBy(() -> client.get().listTables()).as("closed by the template, done with it")
                .isInstanceOfAny(CLOSED_CLIENT);
    }

    @Test
    void aBeanThatUsesOurClientCanStillUseItWhenItIsDestroyed() {
        ShutdownWriter.outcome.set(null);
        contextRunner.withUserConfiguration(ShutdownWriter.class)
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(LockTemplate.class));
        assertThat(ShutdownWriter.outcome.get()).as("what a bean using the client got in its destroy()")
                .isEqualTo("ok");
    }

    /** Writes on shutdown with the application's client (here, ours), as a flush or a deregistration would. */
    @Configuration(proxyBeanMethods = false)
    static class ShutdownWriter {

        static final AtomicReference<String> outcome =
                new AtomicReference<>();

        @Bean
        DisposableBean shutdownWrite(DynamoDbClient client) {
            return () -> {
                try {
                    client.describeTable(b -> b.tableName(TABLE));
                    outcome.set("ok");
                }
                catch (RuntimeException ex) {
                    outcome.set(ex.toString());
                }
            };
        }
    }

    /** A @QueueLocked method called from a destroy(), as a flush under the lock would be: the template is still open. */
    @Test
    void aBeanThatCallsAQueueLockedMethodWhenItIsDestroyedStillGetsTheLock() {
        FlushOnShutdown.outcome.set(null);
        contextRunner.withUserConfiguration(FlushOnShutdown.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(Flusher.class).flush("running")).isEqualTo("flushed running");
        });
        assertThat(FlushOnShutdown.outcome.get()).as("what the @QueueLocked call in a destroy() got")
                .isEqualTo("flushed pending");
    }

    /**
     * The same with every bean lazy (spring.main.lazy-initialization=true) and the flusher's @Bean method returning an
     * interface: its class, and its @QueueLocked method, are known only once it is created, after the start.
     */
    @Test
    void aLazyBeanOfAnInterfaceTypeThatCallsAQueueLockedMethodWhenItIsDestroyedStillGetsTheLock() {
        LazyFlushOnShutdown.outcome.set(null);
        contextRunner.withUserConfiguration(LazyFlushOnShutdown.class)
                .withInitializer(context -> context.addBeanFactoryPostProcessor(
                        new LazyInitializationBeanFactoryPostProcessor()))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    context.getBean("flushOnShutdown");
                    assertThat(context.getBean(Flushing.class).flush("running")).isEqualTo("flushed running");
                });
        assertThat(LazyFlushOnShutdown.outcome.get()).as("what the @QueueLocked call in a destroy() got")
                .isEqualTo("flushed pending");
    }

    public interface Flushing {

        String flush(String id);
    }

    public static class LockedFlusher implements Flushing {

        @Override
        @QueueLocked(entity = "#id")
        public String flush(String id) {
            return "flushed " + id;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class LazyFlushOnShutdown {

        static final AtomicReference<String> outcome = new AtomicReference<>();

        @Bean
        Flushing flusher() {
            return new LockedFlusher();
        }

        @Bean
        DisposableBean flushOnShutdown(Flushing flusher) {
            return () -> {
                try {
                    outcome.set(flusher.flush("pending"));
                }
                catch (RuntimeException ex) {
                    outcome.set(ex.toString());
                }
            };
        }
    }

    public static class Flusher {

        @QueueLocked(entity = "#id")
        public String flush(String id) {
            return "flushed " + id;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class FlushOnShutdown {

        static final AtomicReference<String> outcome = new AtomicReference<>();

        @Bean
        Flusher flusher() {
            return new Flusher();
        }

        @Bean
        DisposableBean flushOnShutdown(Flusher flusher) {
            return () -> {
                try {
                    outcome.set(flusher.flush("pending"));
                }
                catch (RuntimeException ex) {
                    outcome.set(ex.toString());
                }
            };
        }
    }

    @Test
    void ourClientIsClosedWithTheContextWhenTheApplicationBuildsItsOwnTemplate() {
        AtomicReference<DynamoDbClient> client =
                new AtomicReference<>();
        contextRunner.withUserConfiguration(OwnTemplate.class).run(context -> {
            assertThat(context).hasSingleBean(LockTemplate.class);
            client.set(context.getBean(DynamoDbClient.class));
        });
        assertThat(client.get()).isNotNull();
        assertThatThrownBy(() -> client.get().listTables()).isInstanceOfAny(CLOSED_CLIENT);
    }

    @Test
    void configuresLockTemplateOnClientBuiltFromProperties() {
        contextRunner.run(context -> {
            assertThat(context).hasSingleBean(DynamoDbClient.class).hasSingleBean(LockTemplate.class)
                    .hasSingleBean(QueueLockedAdvisor.class).hasSingleBean(QueueLockedMethodValidator.class)
                    .hasSingleBean(LockTableInitializer.class);
            LockTemplate locks = context.getBean(LockTemplate.class);
            assertThat(locks.tableName()).isEqualTo(TABLE);
            assertThat(locks.leaseDuration()).isEqualTo(Duration.ofSeconds(60));
            assertThat(locks.heartbeatInterval()).isEqualTo(Duration.ofSeconds(30));
            assertThat(locks.defaultWait()).isEqualTo(Duration.ofSeconds(60));
            assertThat(locks.defaultNamespace()).isEqualTo("default");
            try (LockHandle lock = locks.acquire("configured", Duration.ZERO)) {
                assertThat(lock.isValid()).isTrue();
            }
        });
    }

    @Test
    void ourClientGivesUpAnAttemptAndACallThatDynamoDbDoesNotAnswer() {
        contextRunner.run(context -> assertThat(context.getBean(DynamoDbClient.class).serviceClientConfiguration()
                .overrideConfiguration()).satisfies(client -> {
                    assertThat(client.apiCallAttemptTimeout()).contains(Duration.ofSeconds(5));
                    assertThat(client.apiCallTimeout()).contains(Duration.ofSeconds(20));
                }));
        contextRunner.withPropertyValues("dynamolock.dynamodb.api-call-attempt-timeout=750ms",
                "dynamolock.dynamodb.api-call-timeout=3s").run(context -> assertThat(context
                        .getBean(DynamoDbClient.class).serviceClientConfiguration().overrideConfiguration())
                        .satisfies(client -> {
                            assertThat(client.apiCallAttemptTimeout()).contains(Duration.ofMillis(750));
                            assertThat(client.apiCallTimeout()).contains(Duration.ofSeconds(3));
                        }));
    }

    @ParameterizedTest
    @ValueSource(strings = {"api-call-attempt-timeout=0s", "api-call-timeout=-1s"})
    void refusesClientTimeoutsThatAreNotPositive(String property) {
        contextRunner.withPropertyValues("dynamolock.dynamodb." + property).run(context -> assertThat(context)
                .getFailure().hasStackTraceContaining(property.startsWith("api-call-attempt") ? "apiCallAttemptTimeout"
                        : "apiCallTimeout").hasStackTraceContaining("must be positive"));
    }

    @Test
    void failsAtStartupNamingTheRegionPropertyWhenNoRegionIsFound() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DynamoLockAutoConfiguration.class))
                .withPropertyValues("dynamolock.table-name=" + TABLE, "dynamolock.dynamodb.endpoint=" + LOCAL.endpoint())
                .run(context -> assertThat(context).getFailure()
                        .hasStackTraceContaining("Could not build the DynamoDbClient for dynamolock")
                        .hasStackTraceContaining("Set dynamolock.dynamodb.region")
                        .rootCause().hasMessageContaining("Unable to load region"));
    }

    /** region: ${AWS_REGION:} with the variable unset binds "": no region, the default chain, as for blank keys. */
    @Test
    void aBlankRegionIsNoRegion() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DynamoLockAutoConfiguration.class))
                .withPropertyValues("dynamolock.table-name=" + TABLE, "dynamolock.dynamodb.endpoint=" + LOCAL.endpoint(),
                        "dynamolock.dynamodb.region=", "dynamolock.dynamodb.access-key-id=local",
                        "dynamolock.dynamodb.secret-access-key=local")
                .run(context -> assertThat(context).getFailure()
                        .hasStackTraceContaining("Set dynamolock.dynamodb.region")
                        .rootCause().hasMessageContaining("Unable to load region"));
    }

    /** A role without DescribeTimeToLive (the README's policy has it): Boot's report names the table, the action. */
    @Test
    void aRefusedPermissionFailsTheStartNamingTheTableTheActionAndTheFix() {
        DynamoDbClient client = LOCAL.client(AccessDenied.to("DescribeTimeToLive"));
        contextRunner.withBean(DynamoDbClient.class, () -> client).run(context -> {
            assertThat(context).hasFailed();
            FailureAnalysis analysis = new DynamoLockFailureAnalyzer().analyze(context.getStartupFailure());
            assertThat(analysis).as("Boot's report of " + context.getStartupFailure()).isNotNull();
            assertThat(analysis.getDescription()).contains("'" + TABLE + "'").contains("dynamodb:DescribeTimeToLive");
            assertThat(analysis.getAction()).contains("Grant dynamodb:DescribeTimeToLive");
        });
    }

    /** create-table=true and a role that may not create tables: creating a missing table is what is refused. */
    @Test
    void aRefusedCreateTableNamesThePropertyThatAvoidsIt() {
        DynamoDbClient client = LOCAL.client(AccessDenied.to("CreateTable"));
        contextRunner.withBean(DynamoDbClient.class, () -> client)
                .withPropertyValues("dynamolock.table-name=missing-" + UUID.randomUUID(), "dynamolock.create-table=true")
                .run(context -> {
                    FailureAnalysis analysis = new DynamoLockFailureAnalyzer().analyze(context.getStartupFailure());
                    assertThat(analysis).as("Boot's report of " + context.getStartupFailure()).isNotNull();
                    assertThat(analysis.getDescription()).contains("dynamodb:CreateTable");
                    assertThat(analysis.getAction()).contains("dynamolock.create-table=false");
                });
    }

    /** Keys DynamoDB does not know (a typo, a rotated key): Boot's report says so and where keys come from. */
    @Test
    void credentialsDynamoDbRefusesFailTheStartWithTheCredentialAdvice() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DynamoLockAutoConfiguration.class))
                .withPropertyValues("dynamolock.table-name=" + TABLE, "dynamolock.dynamodb.endpoint=" + LOCAL.endpoint(),
                        "dynamolock.dynamodb.region=us-east-1", "dynamolock.dynamodb.access-key-id=not-a-key",
                        "dynamolock.dynamodb.secret-access-key=local")
                .run(context -> {
                    FailureAnalysis analysis = new DynamoLockFailureAnalyzer().analyze(context.getStartupFailure());
                    assertThat(analysis).as("Boot's report of " + context.getStartupFailure()).isNotNull();
                    assertThat(analysis.getDescription()).contains("DynamoDB refused the credentials");
                    assertThat(analysis.getAction()).contains("dynamolock.dynamodb.access-key-id");
                });
    }

    /** An endpoint that takes connections and never answers (a stalled proxy): start-up ends at its timeout. */
    @Test
    void anEndpointThatNeverAnswersFailsTheStartAtTheStartupTimeout() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            against(silent, "dynamolock.startup-timeout=2s")
                    .run(context -> assertThat(context).getFailure()
                            .hasStackTraceContaining("Could not reach the lock table: DynamoDB did not answer within"
                                    + " dynamolock.startup-timeout (2000 ms)")
                            .rootCause().as("the SDK's own retries of a read timeout take minutes")
                            .isInstanceOf(ApiCallTimeoutException.class));
        }
    }

    /**
     * An endpoint that never answers, with a startup-timeout longer than the SDK's retries of an attempt that times
     * out (9 attempts of dynamolock.dynamodb.api-call-attempt-timeout): the SDK gives up first, on its attempt
     * timeout, and the report still says DynamoDB did not answer and names the endpoint and startup-timeout, not
     * only the SDK's attempt limit.
     */
    @Test
    void anEndpointThatNeverAnswersAnyAttemptIsReportedAsNotAnswering() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            against(silent, "dynamolock.startup-timeout=2m", "dynamolock.dynamodb.api-call-attempt-timeout=100ms")
                    .run(context -> {
                        assertThat(context).getFailure().rootCause().as("the SDK's attempts ran out first")
                                .isInstanceOf(ApiCallAttemptTimeoutException.class);
                        FailureAnalysis analysis = new DynamoLockFailureAnalyzer().analyze(context.getStartupFailure());
                        assertThat(analysis).as("Boot's report of " + context.getStartupFailure()).isNotNull();
                        assertThat(analysis.getDescription())
                                .startsWith("Could not reach the lock table: DynamoDB did not answer")
                                .contains("each attempt timed out after 100 ms (dynamolock.dynamodb.api-call-attempt-timeout")
                                .contains("dynamolock.dynamodb.endpoint").contains("network")
                                .contains("dynamolock.startup-timeout (120000 ms)");
                        assertThat(analysis.getAction()).contains("dynamolock.dynamodb.endpoint")
                                .doesNotContain("Credentials");
                    });
        }
    }

    /** The auto-configuration against {@code silent}, an endpoint that takes connections and never answers. */
    private static ApplicationContextRunner against(ServerSocket silent, String... properties) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DynamoLockAutoConfiguration.class))
                .withPropertyValues("dynamolock.table-name=" + TABLE,
                        "dynamolock.dynamodb.endpoint=http://127.0.0.1:" + silent.getLocalPort(),
                        "dynamolock.dynamodb.region=us-east-1", "dynamolock.dynamodb.access-key-id=local",
                        "dynamolock.dynamodb.secret-access-key=local")
                .withPropertyValues(properties);
    }

    @Test
    void aStartupTimeoutThatIsNotPositiveIsRefusedNamingIt() {
        contextRunner.withPropertyValues("dynamolock.startup-timeout=0s").run(context -> assertThat(context)
                .getFailure().hasStackTraceContaining("startupTimeout").hasStackTraceContaining("must be positive"));
    }

    @Test
    void failsAtStartupNamingTheCredentialPropertiesWhenNoCredentialsAreFound() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DynamoLockAutoConfiguration.class))
                .withPropertyValues("dynamolock.table-name=" + TABLE, "dynamolock.dynamodb.endpoint=" + LOCAL.endpoint(),
                        "dynamolock.dynamodb.region=us-east-1")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("Unable to load credentials"));
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DynamoLockAutoConfiguration.class))
                .withPropertyValues("dynamolock.table-name=" + TABLE, "dynamolock.dynamodb.endpoint=" + LOCAL.endpoint(),
                        "dynamolock.dynamodb.region=us-east-1")
                .run(context -> {
                    FailureAnalysis analysis = new DynamoLockFailureAnalyzer().analyze(context.getStartupFailure());
                    assertThat(analysis).as("Boot's APPLICATION FAILED TO START report").isNotNull();
                    assertThat(analysis.getDescription()).startsWith("Could not reach the lock table")
                            .contains("Unable to load credentials");
                    assertThat(analysis.getAction()).contains("dynamolock.dynamodb.access-key-id")
                            .contains("DynamoDB Local");
                });
    }

    /** A misspelt property would be left out silently, and the default used: the start stops naming it. */
    @Test
    void failsOnAMisspeltPropertyNamingIt() {
        contextRunner.withPropertyValues("dynamolock.lease-duraton=1s", "dynamolock.wake-up.secert=x")
                .run(context -> assertThat(context).getFailure().hasStackTraceContaining("dynamolock.lease-duraton")
                        .hasStackTraceContaining("dynamolock.wake-up.secert").hasStackTraceContaining("left unbound"));
    }

    /** access-key-id: ${LOCK_ACCESS_KEY:} with the variable unset is no key at all: the default chain. */
    @Test
    void blankKeysAreNoKeys() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DynamoLockAutoConfiguration.class))
                .withPropertyValues("dynamolock.table-name=" + TABLE, "dynamolock.dynamodb.endpoint=" + LOCAL.endpoint(),
                        "dynamolock.dynamodb.region=us-east-1", "dynamolock.dynamodb.access-key-id=",
                        "dynamolock.dynamodb.secret-access-key= ")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("Unable to load credentials"));
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DynamoLockAutoConfiguration.class))
                .withPropertyValues("dynamolock.dynamodb.access-key-id=local", "dynamolock.dynamodb.secret-access-key=")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("dynamolock.dynamodb.access-key-id is set without"
                                + " dynamolock.dynamodb.secret-access-key"));
    }

    /**
     * {@code ${VAR:}} with the variable unset binds "": for every property that is no value, the default, as if it
     * were absent (the README's advice for the region, here for all), rather than a failed start (Boot converts ""
     * to null for a Duration, URI, number, boolean or enum, which a strict binding counted as an unknown name) or
     * dynamolock switched off ({@code enabled}).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("everyProperty")
    void anEmptyValueIsTheDefault(String property) {
        DynamoDbClient client = LOCAL.client(); // so that an empty endpoint, region or key does not matter here
        contextRunner.withPropertyValues(property + "=${DYNAMOLOCK_TEST_UNSET_VAR:}")
                .withBean(DynamoDbClient.class, () -> client)
                .withBean(LockTemplateBuilderCustomizer.class, () -> builder -> builder.tableName(TABLE))
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(LockTemplate.class);
                    String path = beanPath(property);
                    assertThat(new BeanWrapperImpl(context.getBean(DynamoLockProperties.class)).getPropertyValue(path))
                            .as(property).isEqualTo(new BeanWrapperImpl(new DynamoLockProperties()).getPropertyValue(path));
                });
    }

    static List<String> everyProperty() {
        return UnboundPropertyFailureAnalyzer.PROPERTIES;
    }

    /** {@code dynamolock.poll-interval.min}: {@code pollInterval.min}. */
    private static String beanPath(String property) {
        StringBuilder path = new StringBuilder();
        boolean upper = false;
        for (char c : property.substring("dynamolock.".length()).toCharArray()) {
            if (c == '-') {
                upper = true;
            }
            else {
                path.append(upper ? Character.toUpperCase(c) : c);
                upper = false;
            }
        }
        return path.toString();
    }

    @Test
    void appliesProperties() {
        contextRunner.withPropertyValues("dynamolock.lease-duration=20s", "dynamolock.heartbeat-interval=4s",
                "dynamolock.default-wait=0", "dynamolock.default-namespace=orders", "dynamolock.owner-name=node-1",
                "dynamolock.advisor-order=42").run(context -> {
                    LockTemplate locks = context.getBean(LockTemplate.class);
                    assertThat(locks.leaseDuration()).isEqualTo(Duration.ofSeconds(20));
                    assertThat(locks.heartbeatInterval()).isEqualTo(Duration.ofSeconds(4));
                    assertThat(locks.defaultWait()).isZero();
                    assertThat(locks.defaultNamespace()).isEqualTo("orders");
                    assertThat(locks.ownerName()).isEqualTo("node-1");
                    assertThat(context.getBean(QueueLockedAdvisor.class).getOrder()).isEqualTo(42);
                });
    }

    @Test
    void heartbeatIntervalDefaultsToHalfTheLease() {
        contextRunner.withPropertyValues("dynamolock.lease-duration=10s")
                .run(context -> assertThat(context.getBean(LockTemplate.class).heartbeatInterval())
                        .isEqualTo(Duration.ofSeconds(5)));
    }

    /**
     * With spring.aop.auto=false the auto-proxy creator is ours: its proxies follow spring.aop.proxy-target-class as
     * Boot's transaction auto-configuration's do, so a locked bean that implements an interface is still injectable
     * by its class.
     */
    @Test
    void withoutBootsAopTheProxiesFollowSpringAopProxyTargetClass() {
        ApplicationContextRunner aopOff = contextRunner.withPropertyValues("spring.aop.auto=false")
                .withBean(LockedService.class);
        aopOff.run(context -> {
            assertThat(context).hasNotFailed();
            LockedService service = context.getBean(LockedService.class);
            assertThat(AopUtils.isCglibProxy(service)).isTrue();
            assertThat(service.holding("aop-off")).isTrue();
        });
        aopOff.withPropertyValues("spring.aop.proxy-target-class=false").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(AopUtils.isJdkDynamicProxy(context.getBean(Holding.class))).isTrue();
        });
    }

    @Test
    void advisorRunsOutsideBootsTransactionAdvisorByDefault() {
        contextRunner.run(context -> assertThat(context.getBean(QueueLockedAdvisor.class).getOrder())
                .isEqualTo(DynamoLockProperties.DEFAULT_ADVISOR_ORDER)
                .isLessThan(org.springframework.core.Ordered.LOWEST_PRECEDENCE));
    }

    @Test
    void backsOffWhenUserDefinesDynamoDbClient() {
        DynamoDbClient client = LOCAL.client();
        contextRunner.withPropertyValues("dynamolock.dynamodb.endpoint=http://127.0.0.1:1")
                .withBean(DynamoDbClient.class, () -> client).run(context -> {
                    assertThat(context).getBean(DynamoDbClient.class).isSameAs(client);
                    context.getBean(LockTemplate.class).acquire("user-client", Duration.ZERO).release();
                });
    }

    @Test
    void backsOffWhenUserDefinesLockTemplate() {
        LockTemplate own = LockTemplate.builder(LOCAL.client()).tableName("not-checked-at-startup").build();
        contextRunner.withBean(LockTemplate.class, () -> own).run(context -> {
            assertThat(context).getBean(LockTemplate.class).isSameAs(own);
            assertThat(context).doesNotHaveBean(LockTableInitializer.class).hasSingleBean(QueueLockedAdvisor.class);
        });
    }

    /**
     * An application's template on a client of its own (not a bean) needs no {@code dynamolock.dynamodb.*}: the
     * client the starter would build for its own template is not built, so a missing region does not stop the start.
     */
    @Test
    void anApplicationTemplateOnAClientOfItsOwnNeedsNoClientSettings() {
        LockTemplate own = LockTemplate.builder(LOCAL.client()).tableName("not-checked-at-startup").build();
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DynamoLockAutoConfiguration.class,
                        DynamoLockHealthAutoConfiguration.class, DynamoLockEndpointAutoConfiguration.class))
                .withBean(LockTemplate.class, () -> own)
                .run(context -> assertThat(context).hasNotFailed().getBean(LockTemplate.class).isSameAs(own));
    }

    /**
     * Two lock tables, two templates injected by name, neither {@code @Primary}: the parts that serve one template
     * (endpoint, health, gauges, wake-up meters, Spring Integration's registry, the reactive template) back off, as
     * Boot's own do for two {@code DataSource}s, instead of failing the start.
     */
    @Test
    void twoTemplatesWithoutAPrimaryStartWithoutThePartsThatServeOne() {
        withTwoTemplates(false).run(context -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(DynamoLockEndpoint.class).doesNotHaveBean(DynamoLockHealthIndicator.class)
                .doesNotHaveBean(LockGauges.class).doesNotHaveBean(WakeUpMeters.class)
                .doesNotHaveBean(DynamoLockRegistry.class).doesNotHaveBean(ReactiveLockTemplate.class)
                .hasSingleBean(LockMetricsListener.class).hasSingleBean(QueueLockedAdvisor.class));
    }

    @Test
    void twoTemplatesOneOfThemPrimaryAreServedThroughThePrimary() {
        withTwoTemplates(true).withBean(Locked.class).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(DynamoLockHealthIndicator.class)
                    .hasSingleBean(LockGauges.class).hasSingleBean(WakeUpMeters.class)
                    .hasSingleBean(DynamoLockRegistry.class).hasSingleBean(ReactiveLockTemplate.class);
            assertThat(context.getBean(DynamoLockEndpoint.class).locks().owner()).isEqualTo("orders");
            assertThat(context.getBean(Locked.class).holding("primary-locked"))
                    .as("@QueueLocked locks through the primary template").isTrue();
        });
    }

    /** Which template would a @QueueLocked method lock with? The start says, rather than the first call. */
    @Test
    void queueLockedMethodsWithTwoTemplatesAndNoPrimaryFailTheStartNamingBothAndTheFix() {
        withTwoTemplates(false).withBean(Unlocked.class).run(context -> {
            assertThat(context).getFailure().isInstanceOf(QueueLockedConfigurationException.class)
                    .hasMessage("@QueueLocked methods need one LockTemplate to lock with, and the context has 2,"
                            + " none of them @Primary: ordersLocks, billingLocks. Mark the one @QueueLocked should use"
                            + " @Primary");
            FailureAnalysis analysis = new DynamoLockFailureAnalyzer().analyze(context.getStartupFailure());
            assertThat(analysis.getAction()).contains("@Primary").doesNotContain("SpEL");
        });
    }

    /** Two templates on the shared table, told apart by their owner names; {@code ordersLocks} @Primary if asked. */
    private ApplicationContextRunner withTwoTemplates(boolean ordersPrimary) {
        return contextRunner.withConfiguration(AutoConfigurations.of(DynamoLockIntegrationAutoConfiguration.class,
                        DynamoLockReactiveAutoConfiguration.class))
                .withBean(SimpleMeterRegistry.class)
                .withPropertyValues("management.endpoints.web.exposure.include=dynamolock")
                .withBean("ordersLocks", LockTemplate.class, () -> LockTemplate.builder(LOCAL.client())
                        .tableName(TABLE).ownerName("orders").build(), definition -> definition.setPrimary(ordersPrimary))
                .withBean("billingLocks", LockTemplate.class, () -> LockTemplate.builder(LOCAL.client())
                        .tableName(TABLE).ownerName("billing").build());
    }

    @Test
    void backsOffWhenUserDefinesTableInitializer() {
        contextRunner.withPropertyValues("dynamolock.table-name=missing-table")
                .withBean(LockTableInitializer.class, () -> new LockTableInitializer(LOCAL.client(), TABLE, false))
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(LockTemplate.class));
    }

    @Test
    void appliesLockListenersAndCustomizers() {
        List<String> events = new java.util.concurrent.CopyOnWriteArrayList<>();
        LockListener listener = new LockListener() {
            @Override
            public void onAcquired(LockAttempt attempt, LockHandle lock, Duration waited) {
                events.add("acquired " + lock.entity());
            }
        };
        contextRunner.withBean(LockListener.class, () -> listener)
                .withBean(LockTemplateBuilderCustomizer.class, () -> builder -> builder.ownerName("customized"))
                .run(context -> {
                    LockTemplate locks = context.getBean(LockTemplate.class);
                    assertThat(locks.ownerName()).isEqualTo("customized");
                    locks.acquire("listened", Duration.ZERO).release();
                    assertThat(events).containsExactly("acquired listened");
                });
    }

    /**
     * A customizer may choose the table: that one is checked at start-up (or created), and only that one, whatever
     * the property names.
     */
    @Test
    void theTableACustomizerChoosesIsTheOneCheckedAtStartup() {
        String unused = "unused-" + UUID.randomUUID().toString().substring(0, 8);
        contextRunner.withPropertyValues("dynamolock.table-name=" + unused)
                .withBean(LockTemplateBuilderCustomizer.class, () -> builder -> builder.tableName("customized-missing"))
                .run(context -> assertThat(context).getFailure().rootCause().isInstanceOf(LockTableException.class)
                        .hasMessageContaining("Lock table 'customized-missing' does not exist"));
        contextRunner.withPropertyValues("dynamolock.table-name=" + unused)
                .withBean(LockTemplateBuilderCustomizer.class, () -> builder -> builder.tableName(TABLE))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    context.getBean(LockTemplate.class).acquire("in-the-customized-table", Duration.ZERO).release();
                });
        String table = "customized-" + UUID.randomUUID().toString().substring(0, 8);
        contextRunner.withPropertyValues("dynamolock.table-name=" + unused, "dynamolock.create-table=true")
                .withBean(LockTemplateBuilderCustomizer.class, () -> builder -> builder.tableName(table))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    LockTemplate locks = context.getBean(LockTemplate.class);
                    assertThat(locks.tableName()).isEqualTo(table);
                    locks.acquire("in-the-created-table", Duration.ZERO).release();
                });
        try (DynamoDbClient client = LOCAL.client()) {
            assertThat(client.listTables().tableNames()).as("tables").contains(table).doesNotContain(unused);
        }
    }

    /** Beans may order themselves after the table check by the initializer's name. */
    @Test
    void anApplicationBeanThatDependsOnTheTableInitializerStartsAfterTheCheck() {
        contextRunner.withUserConfiguration(NeedsTheTable.class).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(LockTableInitializer.class);
            assertThat(context.getBean("outboxPoller")).isEqualTo("started with " + TABLE + " checked");
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class NeedsTheTable {

        @Bean
        @DependsOn("lockTableInitializer")
        String outboxPoller(org.springframework.beans.factory.BeanFactory beans) {
            // The table was checked before this bean is made.
            assertThat(((org.springframework.beans.factory.config.ConfigurableListableBeanFactory) beans)
                    .containsSingleton("lockTableInitializer")).isTrue();
            return "started with " + TABLE + " checked";
        }
    }

    /** The application's initializer in a parent context (a bootstrap context, say) replaces the check too. */
    @Test
    void anApplicationsTableInitializerInAParentContextReplacesTheCheck() {
        try (AnnotationConfigApplicationContext parent = new AnnotationConfigApplicationContext()) {
            parent.registerBean("myTableCheck", LockTableInitializer.class,
                    () -> new LockTableInitializer(LOCAL.client(), TABLE, false));
            parent.refresh();
            contextRunner.withParent(parent).withPropertyValues("dynamolock.table-name=missing-table")
                    .run(context -> assertThat(context).hasNotFailed().hasSingleBean(LockTemplate.class));
        }
    }

    /** Several initializers of the application's, here and in a parent context, each replace the check. */
    @Test
    void severalApplicationTableInitializersReplaceTheCheck() {
        contextRunner.withPropertyValues("dynamolock.table-name=missing-table")
                .withBean("ordersTableCheck", LockTableInitializer.class,
                        () -> new LockTableInitializer(LOCAL.client(), TABLE, false))
                .withBean("billingTableCheck", LockTableInitializer.class,
                        () -> new LockTableInitializer(LOCAL.client(), TABLE, false))
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(LockTemplate.class));
        try (AnnotationConfigApplicationContext parent = new AnnotationConfigApplicationContext()) {
            parent.registerBean("parentCheck", LockTableInitializer.class,
                    () -> new LockTableInitializer(LOCAL.client(), TABLE, false));
            parent.refresh();
            contextRunner.withParent(parent).withPropertyValues("dynamolock.table-name=missing-table")
                    .withBean("childCheck", LockTableInitializer.class,
                            () -> new LockTableInitializer(LOCAL.client(), TABLE, false))
                    .run(context -> assertThat(context).hasNotFailed().hasBean("lockTemplate"));
        }
    }

    /** A customizer overrode a property that was written right: the code is blamed, not the property. */
    @Test
    void aBadOptionACustomizerSetOverAWrittenPropertyIsReportedAsSetInCode() {
        contextRunner.withPropertyValues("dynamolock.owner-name=orders")
                .withBean(LockTemplateBuilderCustomizer.class, () -> builder -> builder.ownerName(" "))
                .run(context -> {
                    assertThat(context).getFailure().rootCause().isInstanceOf(LockOptionException.class);
                    FailureAnalysis analysis = new LockOptionFailureAnalyzer(new MockEnvironment()
                            .withProperty("dynamolock.owner-name", "orders")).analyze(context.getStartupFailure());
                    assertThat(analysis.getDescription()).endsWith("(set in code, e.g. by a"
                            + " LockTemplateBuilderCustomizer, over dynamolock.owner-name=orders)");
                    assertThat(analysis.getAction()).isEqualTo("Correct the code that sets ownerName as the message"
                            + " says.");
                });
    }

    /** A listener the template is built with may order itself after the table check by name. */
    @Test
    void aListenerOrderedAfterTheTableCheckByNameStarts() {
        contextRunner.withUserConfiguration(ListenerAfterTheTable.class)
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(LockTemplate.class));
    }

    @Configuration(proxyBeanMethods = false)
    static class ListenerAfterTheTable {

        @Bean
        @DependsOn("lockTableInitializer")
        LockListener auditListener() {
            return new LockListener() {
            };
        }
    }

    /** Options without a default of their own (owner name, heartbeat) and a port a customizer chose: set in code. */
    @Test
    void badOptionsSetByACustomizerAreReportedAsSetInCodeWhateverTheirDefault() throws Exception {
        assertSetInCode(builder -> builder.ownerName(" "), "ownerName");
        assertSetInCode(builder -> builder.heartbeatInterval(Duration.ofSeconds(-1)), "heartbeatInterval");
        try (DatagramSocket taken = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            assertSetInCode(builder -> builder.wakeUp(WakeUpOptions.builder().enabled(true).bindAddress("127.0.0.1")
                    .port(port).build()), "wakeUp.port");
        }
    }

    private void assertSetInCode(LockTemplateBuilderCustomizer customizer, String option) {
        contextRunner.withBean(LockTemplateBuilderCustomizer.class, () -> customizer).run(context -> {
            assertThat(context).getFailure().rootCause().isInstanceOf(LockOptionException.class);
            FailureAnalysis analysis = new LockOptionFailureAnalyzer(new MockEnvironment())
                    .analyze(context.getStartupFailure());
            assertThat(analysis.getDescription()).as(option).contains("(set in code").doesNotContain("(the default)");
            assertThat(analysis.getAction()).isEqualTo("Correct the code that sets " + option + " as the message says.");
        });
    }

    /** The core blames the port for a bind that fails; the address may be what was written. */
    @Test
    void anUnbindableAddressIsReportedWithThePropertiesAsWritten() {
        contextRunner.withPropertyValues("dynamolock.wake-up.enabled=true", "dynamolock.wake-up.bind-address=203.0.113.7")
                .run(context -> {
                    FailureAnalysis analysis = new LockOptionFailureAnalyzer(new MockEnvironment()
                            .withProperty("dynamolock.wake-up.bind-address", "203.0.113.7"))
                            .analyze(context.getStartupFailure());
                    assertThat(analysis.getDescription()).startsWith("dynamolock.wake-up.port=0 (the default) with"
                            + " dynamolock.wake-up.bind-address=203.0.113.7: Cannot receive wake-up hints on UDP"
                            + " 203.0.113.7:0");
                    assertThat(analysis.getAction()).isEqualTo("Correct dynamolock.wake-up.port or"
                            + " dynamolock.wake-up.bind-address as the message says.");
                });
    }

    /** A bad option a customizer set is not blamed on a property nobody wrote, nor called its default. */
    @Test
    void aBadOptionSetByACustomizerIsReportedAsSetInCode() {
        contextRunner.withBean(LockTemplateBuilderCustomizer.class, () -> builder -> builder.maxQueueLength(0))
                .run(context -> {
                    assertThat(context).getFailure().rootCause().isInstanceOf(LockOptionException.class);
                    FailureAnalysis analysis = new LockOptionFailureAnalyzer(new MockEnvironment())
                            .analyze(context.getStartupFailure());
                    assertThat(analysis.getDescription()).isEqualTo("maxQueueLength 0 must be at least 1 (set in"
                            + " code, e.g. by a LockTemplateBuilderCustomizer: dynamolock.max-queue-length is not set"
                            + " and its default is 100)");
                    assertThat(analysis.getAction()).isEqualTo("Correct the code that sets maxQueueLength as the"
                            + " message says.");
                });
    }

    @Test
    void disabledByProperty() {
        contextRunner.withPropertyValues("dynamolock.enabled=false").run(context -> assertThat(context)
                .doesNotHaveBean(LockTemplate.class).doesNotHaveBean(DynamoDbClient.class)
                .doesNotHaveBean(QueueLockedAdvisor.class).doesNotHaveBean(LockMetricsListener.class)
                .doesNotHaveBean(DynamoLockHealthIndicator.class));
    }

    @Test
    void backsOffWithoutAwsSdk() {
        contextRunner.withClassLoader(new FilteredClassLoader(DynamoDbClient.class))
                .run(context -> assertThat(context).doesNotHaveBean(LockTemplate.class)
                        .doesNotHaveBean(QueueLockedAdvisor.class));
    }

    @Test
    void createsTableWhenAsked() {
        String table = "created-" + UUID.randomUUID().toString().substring(0, 8);
        contextRunner.withPropertyValues("dynamolock.table-name=" + table, "dynamolock.create-table=true")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    context.getBean(LockTemplate.class).acquire("in-new-table", Duration.ZERO).release();
                });
    }

    @Test
    void failsFastWhenTableIsMissing() {
        contextRunner.withPropertyValues("dynamolock.table-name=no-such-table").run(context -> {
            assertThat(context).getFailure().rootCause().isInstanceOf(LockTableException.class)
                    .hasMessageContaining("Lock table 'no-such-table' does not exist");
            assertThat(new DynamoLockFailureAnalyzer().analyze(context.getStartupFailure()).getAction())
                    .as("the core names no Spring property; the failure report does")
                    .contains("dynamolock.create-table=true");
        });
    }

    /** Each rule of a lock option fails the start with the property, the value as written and the limit. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            dynamolock.table-name=ab                                | dynamolock.table-name=ab: tableName 'ab' is not a valid DynamoDB table name: use 3 to 255 letters
            dynamolock.lease-duration=400d                          | dynamolock.lease-duration=400d: leaseDuration PT9600H is too long: at most 365 days
            dynamolock.lease-duration=0s                            | dynamolock.lease-duration=0s: leaseDuration PT0S must be a positive duration
            dynamolock.heartbeat-interval=0s                        | dynamolock.heartbeat-interval=0s: heartbeatInterval PT0S must be a positive duration
            dynamolock.heartbeat-interval=60s                       | dynamolock.lease-duration=PT1M (the default) with dynamolock.heartbeat-interval=60s: lease PT1M must be longer than the heartbeat interval PT1M
            dynamolock.default-wait=-1s                             | dynamolock.default-wait=-1s: defaultWait PT-1S is negative
            dynamolock.poll-interval.min=0ms                        | dynamolock.poll-interval.min=0ms: minPollInterval PT0S must be a positive duration
            dynamolock.poll-interval.max=10ms                       | dynamolock.poll-interval.max=10ms with dynamolock.poll-interval.min (the default): maxPollInterval PT0.01S is shorter than minPollInterval PT0.05S
            dynamolock.max-queue-length=0                           | dynamolock.max-queue-length=0: maxQueueLength 0 must be at least 1
            """)
    void failsOnEveryBrokenOptionRuleNamingTheProperty(String property, String expected) {
        assertOptionFailure(property, expected);
    }

    /** The one written is named, and no advice to remove a property that was not set. */
    @Test
    void aRuleOfTwoOptionsNamesBothAndAdvisesOnTheOneWritten() {
        contextRunner.withPropertyValues("dynamolock.heartbeat-interval=90s").run(context -> {
            FailureAnalysis analysis = new LockOptionFailureAnalyzer(new MockEnvironment()
                    .withProperty("dynamolock.heartbeat-interval", "90s")).analyze(context.getStartupFailure());
            assertThat(analysis.getDescription()).startsWith("dynamolock.lease-duration=PT1M (the default) with"
                    + " dynamolock.heartbeat-interval=90s: ");
            assertThat(analysis.getAction()).isEqualTo("Correct dynamolock.lease-duration or"
                    + " dynamolock.heartbeat-interval as the message says.");
        });
    }

    @Test
    void failsOnOptionsOverDynamoDbsLimitsNamingTheProperty() {
        String namespace = "n".repeat(1100);
        assertOptionFailure("dynamolock.default-namespace=" + namespace, "dynamolock.default-namespace=" + namespace
                + ": defaultNamespace 'nnn");
        assertOptionFailure("dynamolock.default-namespace=" + namespace, "is 1100 bytes in UTF-8; DynamoDB allows at"
                + " most 1024 bytes");
        String owner = "o".repeat(201);
        assertOptionFailure("dynamolock.owner-name=" + owner, "dynamolock.owner-name=" + owner + ": ownerName '"
                + owner + "' must be 1 to 200 characters");
    }

    private void assertOptionFailure(String property, String expected) {
        contextRunner.withPropertyValues(property).run(context -> {
            assertThat(context).getFailure().rootCause().isInstanceOf(LockOptionException.class);
            int equals = property.indexOf('=');
            MockEnvironment environment = new MockEnvironment()
                    .withProperty(property.substring(0, equals), property.substring(equals + 1));
            FailureAnalysis analysis = new LockOptionFailureAnalyzer(environment).analyze(context.getStartupFailure());
            assertThat(analysis).as("analysed").isNotNull();
            assertThat(analysis.getDescription()).contains(expected);
        });
    }

    @Test
    void wakeUpHintsAreOffByDefault() {
        contextRunner.withBean(SimpleMeterRegistry.class).run(context -> {
            assertThat(context.getBean(LockTemplate.class).wakeUpAddress()).isNull();
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            context.getBean(WakeUpMeters.class).bindTo(registry);
            assertThat(registry.find("dynamolock.wake-up.hints").meters()).isEmpty();
        });
    }

    @Test
    void appliesWakeUpPropertiesAndMetersTheHints() {
        contextRunner.withBean(SimpleMeterRegistry.class).withPropertyValues("dynamolock.wake-up.enabled=true",
                "dynamolock.wake-up.bind-address=127.0.0.1", "dynamolock.wake-up.advertised-address=10.0.0.9",
                "dynamolock.wake-up.secret=0123456789abcdef-from-a-vault").run(context -> {
                    LockTemplate locks = context.getBean(LockTemplate.class);
                    assertThat(locks.wakeUpAddress()).as("the advertised host, the bound ephemeral port")
                            .matches("10\\.0\\.0\\.9:[1-9][0-9]*");
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    context.getBean(WakeUpMeters.class).bindTo(registry); // what Boot's metrics auto-configuration does
                    assertThat(registry.find("dynamolock.wake-up.hints").meters())
                            .extracting(meter -> meter.getId().getTag("result"))
                            .containsExactlyInAnyOrder("sent", "dropped", "received", "rejected", "useful");
                    assertThat(registry.get("dynamolock.wake-up.hints").tag("result", "sent").functionCounter().count())
                            .isZero();
                });
    }

    @Test
    void failsOnAShortWakeUpSecretNamingThePropertyButNeverItsValue() {
        contextRunner.withPropertyValues("dynamolock.wake-up.enabled=true", "dynamolock.wake-up.secret=too-short")
                .run(context -> {
                    assertThat(context).getFailure().rootCause().isInstanceOf(LockOptionException.class);
                    MockEnvironment environment = new MockEnvironment()
                            .withProperty("dynamolock.wake-up.secret", "too-short");
                    FailureAnalysis analysis = new LockOptionFailureAnalyzer(environment)
                            .analyze(context.getStartupFailure());
                    assertThat(analysis.getDescription()).contains("dynamolock.wake-up.secret=(9 bytes)",
                            "at least 16").doesNotContain("too-short");
                });
    }

    /** Also while hints are off: a set-up left with a bad value is refused now, not on the day it is turned on. */
    @ParameterizedTest
    @ValueSource(strings = {"true", "false"})
    void failsOnABadWakeUpPortNamingThePropertyWhetherHintsAreOnOrNot(String enabled) {
        contextRunner.withPropertyValues("dynamolock.wake-up.enabled=" + enabled, "dynamolock.wake-up.port=70000")
                .run(context -> {
                    FailureAnalysis analysis = new LockOptionFailureAnalyzer(new MockEnvironment()
                            .withProperty("dynamolock.wake-up.port", "70000")).analyze(context.getStartupFailure());
                    assertThat(analysis.getDescription())
                            .contains("dynamolock.wake-up.port=70000: wakeUp.port 70000 is not a UDP port");
                });
    }

    @Test
    void failsOnAccessKeyWithoutSecret() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DynamoLockAutoConfiguration.class))
                .withPropertyValues("dynamolock.dynamodb.access-key-id=local")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("dynamolock.dynamodb.access-key-id is set without"
                                + " dynamolock.dynamodb.secret-access-key"));
    }

    @ParameterizedTest
    @CsvSource({"localhost:8000", "ftp://localhost:8000", "//localhost:8000"})
    void failsOnAnEndpointThatIsNoHttpUrlNamingItAndTheFix(String endpoint) {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DynamoLockAutoConfiguration.class))
                .withPropertyValues("dynamolock.dynamodb.endpoint=" + endpoint)
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("on field 'dynamodb.endpoint'")
                        .hasMessageContaining("http://localhost:8000"));
    }

    @Test
    void failsOnUnknownLostLeasePolicy() {
        contextRunner.withPropertyValues("dynamolock.on-lost-lease=ignore")
                .run(context -> assertThat(context).getFailure()
                        .hasStackTraceContaining("Failed to bind properties under 'dynamolock.on-lost-lease'"));
    }

    @Test
    void proxiesQueueLockedBeansWithoutAspectJ() {
        contextRunner.withClassLoader(new FilteredClassLoader("org.aspectj"))
                .withBean(Locked.class).run(context -> {
                    Locked locked = context.getBean(Locked.class);
                    assertThat(AopUtils.isAopProxy(locked)).isTrue();
                    assertThat(locked.holding("no-aspectj")).isTrue();
                });
    }

    @Test
    void recordsMetricsWhenMeterRegistryPresent() {
        contextRunner.withBean(SimpleMeterRegistry.class).run(context -> {
            assertThat(context).hasSingleBean(LockMetricsListener.class).hasSingleBean(LockGauges.class);
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            context.getBean(LockGauges.class).bindTo(registry);
            LockTemplate locks = context.getBean(LockTemplate.class);
            try (LockHandle lock = locks.acquire("metered", Duration.ZERO)) {
                assertThat(registry.get("dynamolock.locks").tag("state", "holding").tag("mode", "exclusive").gauge()
                        .value()).isEqualTo(1);
                assertThat(registry.get("dynamolock.locks").tag("state", "waiting").tag("mode", "exclusive").gauge()
                        .value()).isZero();
                // Another acquisition of the same thread that may not join queues behind it and gives up.
                assertThat(locks.tryAcquire(LockRequest.builder("metered").reentrant(false).build())).isEmpty();
            }
            assertThat(registry.get("dynamolock.acquire").tag("outcome", "acquired").tag("namespace", "default")
                    .tag("mode", "exclusive").timer().count()).isEqualTo(1);
            assertThat(registry.get("dynamolock.acquire").tag("outcome", "timeout").timer().count()).isEqualTo(1);
            Thread.currentThread().interrupt();
            try {
                assertThatThrownBy(() -> locks.acquire("metered", Duration.ofSeconds(5)))
                        .isInstanceOf(LockInterruptedException.class);
            }
            finally {
                Thread.interrupted();
            }
            assertThat(registry.get("dynamolock.acquire").tag("outcome", "interrupted").timer().count())
                    .as("failures other than time-outs are tagged too").isEqualTo(1);
            assertThat(registry.get("dynamolock.held").timer().count()).isEqualTo(1);
            assertThat(registry.get("dynamolock.locks").tag("state", "holding").tag("mode", "exclusive").gauge()
                    .value()).isZero();
            locks.execute(LockRequest.builder("metered-read").mode(LockMode.SHARED).build(), lock -> {
                assertThat(registry.get("dynamolock.locks").tag("state", "holding").tag("mode", "shared").gauge()
                        .value()).isEqualTo(1);
                return null;
            });
            assertThat(registry.get("dynamolock.acquire").tag("outcome", "acquired").tag("mode", "shared").timer()
                    .count()).isEqualTo(1);
            assertThat(registry.get("dynamolock.held").tag("mode", "shared").timer().count()).isEqualTo(1);
        });
    }

    @Test
    void noMetricsWithoutMicrometer() {
        contextRunner.withClassLoader(new FilteredClassLoader(MeterRegistry.class))
                .run(context -> assertThat(context).hasSingleBean(LockTemplate.class)
                        .doesNotHaveBean(LockMetricsListener.class).doesNotHaveBean(LockGauges.class));
    }

    @Test
    void noMetricsWithoutMeterRegistry() {
        contextRunner.run(context -> assertThat(context).doesNotHaveBean(LockMetricsListener.class));
    }

    @Test
    void reportsHealthOfTable() {
        contextRunner.run(context -> {
            var health = context.getBean("dynamolockHealthIndicator", HealthIndicator.class).health();
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails()).containsEntry("table", TABLE).containsEntry("ttlEnabled", true)
                    .containsEntry("holding", 0L);
        });
    }

    /** An application with several clients and its own template: health checks the template's table, its way. */
    @Test
    void reportsHealthThroughTheTemplateWhateverClientsTheApplicationHas() {
        contextRunner.withBean("ordersClient", DynamoDbClient.class, LOCAL::client)
                .withBean("auditClient", DynamoDbClient.class, LOCAL::client)
                .withBean(LockTemplate.class, () -> LockTemplate.builder(LOCAL.client()).tableName(TABLE).build())
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    var health = context.getBean("dynamolockHealthIndicator", HealthIndicator.class).health();
                    assertThat(health.getStatus()).isEqualTo(Status.UP);
                    assertThat(health.getDetails()).containsEntry("table", TABLE);
                });
    }

    @Test
    void aHealthIndicatorOfTheApplicationsOwnUnderAnyNameReplacesOurs() {
        contextRunner.withUserConfiguration(OwnHealth.class)
                .run(context -> assertThat(context).hasSingleBean(DynamoLockHealthIndicator.class)
                        .hasBean("locksHealth").doesNotHaveBean("dynamolockHealthIndicator"));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnTemplate {

        @Bean
        LockTemplate lockTemplate(DynamoDbClient client) {
            return LockTemplate.builder(client).tableName(TABLE).build();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnHealth {

        @Bean
        DynamoLockHealthIndicator locksHealth(LockTemplate lockTemplate) {
            return new DynamoLockHealthIndicator(lockTemplate);
        }
    }

    @Test
    void reportsHealthDownForMissingTable() {
        contextRunner.withBean(LockTemplate.class,
                () -> LockTemplate.builder(LOCAL.client()).tableName("gone-table").build()).run(context -> {
                    var health = context.getBean("dynamolockHealthIndicator", HealthIndicator.class).health();
                    assertThat(health.getStatus()).isEqualTo(Status.DOWN);
                    assertThat(health.getDetails()).containsEntry("table", "gone-table");
                });
    }

    /** A table whose KMS key is out of reach serves no lock: DOWN, saying why, not UP with TTL on. */
    @Test
    void reportsHealthDownForATableWhoseKeyIsOutOfReach() {
        ExecutionInterceptor keyOutOfReach = new ExecutionInterceptor() {
            @Override
            public SdkResponse modifyResponse(Context.ModifyResponse context, ExecutionAttributes attributes) {
                return context.response() instanceof DescribeTableResponse described
                        ? described.toBuilder().table(described.table().toBuilder()
                                .tableStatus(TableStatus.INACCESSIBLE_ENCRYPTION_CREDENTIALS).build()).build()
                        : context.response();
            }
        };
        contextRunner.withBean(LockTemplate.class,
                () -> LockTemplate.builder(LOCAL.client(keyOutOfReach)).tableName(TABLE).build()).run(context -> {
                    var health = context.getBean("dynamolockHealthIndicator", HealthIndicator.class).health(true);
                    assertThat(health.getStatus()).isEqualTo(Status.DOWN);
                    assertThat(health.getDetails().get("problems")).asString()
                            .contains("INACCESSIBLE_ENCRYPTION_CREDENTIALS");
                });
    }

    @Test
    void noHealthIndicatorWhenDisabledOrWithoutHealthSupport() {
        contextRunner.withPropertyValues("management.health.dynamolock.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(DynamoLockHealthIndicator.class));
        contextRunner.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
                .run(context -> assertThat(context).hasSingleBean(LockTemplate.class)
                        .doesNotHaveBean(DynamoLockHealthIndicator.class));
    }

    @Test
    void endpointListsLocksAndQueues() {
        contextRunner.withPropertyValues("management.endpoints.web.exposure.include=dynamolock").run(context -> {
            DynamoLockEndpoint endpoint = context.getBean(DynamoLockEndpoint.class);
            LockTemplate locks = context.getBean(LockTemplate.class);
            try (LockHandle lock = locks.acquire(LockRequest.builder("shown").namespace("ep").build())) {
                var mine = endpoint.locks();
                assertThat(mine.table()).isEqualTo(TABLE);
                assertThat(mine.owner()).isEqualTo(locks.ownerName());
                assertThat(mine.locks()).singleElement().satisfies(info -> {
                    assertThat(info.entity()).isEqualTo("shown");
                    assertThat(info.namespace()).isEqualTo("ep");
                    assertThat(info.holding()).isTrue();
                });
                var queue = queue(endpoint.queueInNamespace("shown", "ep"));
                assertThat(queue.entries()).singleElement().satisfies(entry -> {
                    assertThat(entry.ticket()).isEqualTo(lock.fencingToken());
                    assertThat(entry.mode()).isEqualTo("fail-open");
                    assertThat(entry.lockMode()).isEqualTo("exclusive");
                    assertThat(entry.status()).isEqualTo("alive");
                });
                assertThat(queue.permits()).isEqualTo(1);
                assertThat(queue(endpoint.queue("shown")).entries()).isEmpty();
            }
            try (LockHandle readers = locks.acquire(LockRequest.builder("shown-read").mode(LockMode.SHARED).build());
                    LockHandle semaphore = locks.acquire(LockRequest.builder("shown-api").permits(5).build())) {
                assertThat(endpoint.locks().locks()).extracting(LockInfo::mode)
                        .containsExactlyInAnyOrder(LockMode.SHARED, LockMode.EXCLUSIVE);
                assertThat(queue(endpoint.queue("shown-read")).entries()).singleElement()
                        .satisfies(entry -> assertThat(entry.lockMode()).isEqualTo("shared"));
                assertThat(queue(endpoint.queue("shown-api")).permits()).isEqualTo(5);
            }
        });
    }

    private static DynamoLockEndpoint.QueueDescriptor queue(WebEndpointResponse<Object> response) {
        assertThat(response.getStatus()).isEqualTo(200);
        return (DynamoLockEndpoint.QueueDescriptor) response.getBody();
    }

    /** The endpoint's web operations by HTTP method and path, filtered by access as Boot's actuator does. */
    static Map<String, WebOperation> webOperations(ApplicationContext context) {
        WebEndpointDiscoverer discoverer = new WebEndpointDiscoverer(context,
                new ConversionServiceParameterValueMapper(), EndpointMediaTypes.DEFAULT, List.of(), List.of(),
                List.of(), List.of(), List.of(OperationFilter.byAccess(
                        new PropertiesEndpointAccessResolver(context.getEnvironment()))));
        ExposableWebEndpoint endpoint = discoverer.getEndpoints().stream()
                .filter(candidate -> candidate.getEndpointId().toString().equals("dynamolock")).findFirst()
                .orElseThrow();
        Map<String, WebOperation> operations = new HashMap<>();
        endpoint.getOperations().forEach(operation -> operations.put(operation.getRequestPredicate().getHttpMethod()
                + " " + operation.getRequestPredicate().getPath(), operation));
        return operations;
    }

    @Test
    void endpointMapsWebPathsForLocksAndQueuesAndNoBreakUnlessAccessIsUnrestricted() {
        contextRunner.withPropertyValues("management.endpoints.web.exposure.include=dynamolock").run(context -> {
            Map<String, WebOperation> byPath = webOperations(context);
            assertThat(byPath).containsOnlyKeys("GET dynamolock", "GET dynamolock/{entity}",
                    "GET dynamolock/{entity}/{namespace}");
            Object queue = byPath.get("GET dynamolock/{entity}/{namespace}").invoke(new InvocationContext(
                    SecurityContext.NONE, Map.of("entity", "mapped", "namespace", "web")));
            assertThat(queue).isInstanceOfSatisfying(WebEndpointResponse.class, response -> {
                DynamoLockEndpoint.QueueDescriptor descriptor = queue(response);
                assertThat(descriptor.entity()).isEqualTo("mapped");
                assertThat(descriptor.namespace()).isEqualTo("web");
                assertThat(descriptor.entries()).isEmpty();
            });
        });
    }

    /** A '/' can be in an entity but in no path: the query names it, to read the queue and to break an entry. */
    @Test
    void endpointShowsAndBreaksALockWhoseEntityHasASlashNamedInTheQuery() {
        contextRunner.withInitializer(context -> context.getEnvironment()
                        .setConversionService((ConfigurableConversionService) ApplicationConversionService.getSharedInstance()))
                .withPropertyValues("management.endpoints.web.exposure.include=dynamolock",
                        "management.endpoint.dynamolock.access=unrestricted").run(context -> {
            Map<String, WebOperation> operations = webOperations(context);
            LockTemplate locks = context.getBean(LockTemplate.class);
            LockHandle held = locks.acquire(LockRequest.builder("tenant/7").namespace("ep").failClosed(true).build());
            try {
                Object shown = operations.get("GET dynamolock").invoke(new InvocationContext(SecurityContext.NONE,
                        Map.of("entity", "tenant/7", "namespace", "ep")));
                @SuppressWarnings("unchecked")
                WebEndpointResponse<Object> response = (WebEndpointResponse<Object>) shown;
                assertThat(queue(response).entries()).singleElement()
                        .satisfies(entry -> assertThat(entry.ticket()).isEqualTo(held.fencingToken()));
                Object broken = operations.get("DELETE dynamolock").invoke(new InvocationContext(SecurityContext.NONE,
                        Map.of("entity", "tenant/7", "namespace", "ep", "ticket", Long.toString(held.fencingToken()))));
                assertThat(((WebEndpointResponse<?>) broken).getStatus()).isEqualTo(200);
                assertThat(locks.queue("tenant/7", "ep").entries()).isEmpty();
                Object noEntity = operations.get("DELETE dynamolock").invoke(new InvocationContext(SecurityContext.NONE,
                        Map.of("ticket", "5")));
                assertStatusAndMessage((WebEndpointResponse<?>) noEntity, 400, "?entity=E&ticket=N");
                DynamoLockEndpoint endpoint = context.getBean(DynamoLockEndpoint.class);
                WebEndpointResponse<Object> noTicket = endpoint.breakEntryNamedInTheQuery("tenant/7", "ep", null,
                        SecurityContext.NONE);
                assertStatusAndMessage(noTicket, 400, "DELETE /actuator/dynamolock?entity=tenant%2F7&namespace=ep"
                        + "&ticket=N, with N from GET /actuator/dynamolock?entity=tenant%2F7&namespace=ep");
                assertStatusAndMessage(endpoint.breakEntryNamedInTheQuery("tenant/7", null, "x", SecurityContext.NONE),
                        400, "ticket 'x' is not a number; copy the ticket of the entry to remove from GET"
                        + " /actuator/dynamolock?entity=tenant%2F7");
                Object mine = operations.get("GET dynamolock").invoke(new InvocationContext(SecurityContext.NONE,
                        Map.of()));
                assertThat(mine).isInstanceOf(DynamoLockEndpoint.LocksDescriptor.class);
            }
            finally {
                held.release();
            }
        });
    }

    @Test
    void endpointAnswersABadRequestNamingTheValueForAQueueItCannotRead() {
        contextRunner.withPropertyValues("management.endpoints.web.exposure.include=dynamolock").run(context -> {
            Map<String, WebOperation> byPath = webOperations(context);
            Function<Map<String, Object>, Object> read = arguments -> byPath.get(arguments.size() == 1
                    ? "GET dynamolock/{entity}" : "GET dynamolock/{entity}/{namespace}")
                    .invoke(new InvocationContext(SecurityContext.NONE, arguments));
            assertThat(read.apply(Map.of("entity", "e".repeat(2049)))).isInstanceOfSatisfying(
                    WebEndpointResponse.class, response -> assertStatusAndMessage(response, 400, "is 2049 bytes"));
            assertThat(read.apply(Map.of("entity", "order-42", "namespace", " "))).isInstanceOfSatisfying(
                    WebEndpointResponse.class, response -> assertStatusAndMessage(response, 400, "namespace"));
        });
    }

    @Test
    void endpointBreaksAnEntryByTicketWhenAccessIsUnrestricted() {
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        ((Logger) LoggerFactory.getLogger(DynamoLockEndpoint.class)).addAppender(logged);
        // As in an application: Boot's conversion service reads "unrestricted" as Access.UNRESTRICTED.
        contextRunner.withInitializer(context -> context.getEnvironment()
                        .setConversionService((ConfigurableConversionService) ApplicationConversionService.getSharedInstance()))
                .withBean(SimpleMeterRegistry.class).withPropertyValues(
                "management.endpoints.web.exposure.include=dynamolock",
                "management.endpoint.dynamolock.access=unrestricted").run(context -> {
            Map<String, WebOperation> operations = webOperations(context);
            assertThat(operations).containsKeys("DELETE dynamolock/{entity}", "DELETE dynamolock/{entity}/{namespace}");
            WebOperation breakInNamespace = operations.get("DELETE dynamolock/{entity}/{namespace}");
            SecurityContext alice = new SecurityContext() {
                @Override
                public Principal getPrincipal() {
                    return () -> "ops-alice";
                }

                @Override
                public boolean isUserInRole(String role) {
                    return false;
                }
            };
            LockTemplate locks = context.getBean(LockTemplate.class);
            LockHandle held = locks.acquire(LockRequest.builder("stuck").namespace("ops").failClosed(true).build());
            Function<Map<String, Object>, WebEndpointResponse<?>> breakWith = arguments -> (WebEndpointResponse<?>)
                    breakInNamespace.invoke(new InvocationContext(alice, arguments));

            assertStatusAndMessage(breakWith.apply(Map.of("entity", "stuck", "namespace", "ops")), 400,
                    "needs the ticket");
            assertStatusAndMessage(breakWith.apply(Map.of("entity", "stuck", "namespace", "ops", "ticket", "12x")),
                    400, "ticket '12x' is not a number");
            assertStatusAndMessage(breakWith.apply(Map.of("entity", "e".repeat(2049), "namespace", "ops",
                    "ticket", "1")), 400, "is 2049 bytes in UTF-8");
            assertStatusAndMessage(breakWith.apply(Map.of("entity", "unknown", "namespace", "ops", "ticket", "1")),
                    404, "No entry with ticket 1", "the queue holds []");
            long stale = held.fencingToken() - 1;
            assertStatusAndMessage(breakWith.apply(Map.of("entity", "stuck", "namespace", "ops",
                    "ticket", Long.toString(stale))), 404, "No entry with ticket " + stale,
                    "[" + held.fencingToken() + " (");
            assertThat(locks.queue("stuck", "ops").entries()).hasSize(1);

            WebEndpointResponse<?> broken = breakWith.apply(Map.of("entity", "stuck", "namespace", "ops",
                    "ticket", Long.toString(held.fencingToken())));
            assertThat(broken.getStatus()).isEqualTo(200);
            assertThat(broken.getBody()).isInstanceOfSatisfying(DynamoLockEndpoint.BreakDescriptor.class, body -> {
                assertThat(body.broken().ticket()).isEqualTo(held.fencingToken());
                assertThat(body.broken().mode()).isEqualTo("fail-closed");
                assertThat(body.broken().status()).isEqualTo("alive");
            });
            assertThat(locks.queue("stuck", "ops").entries()).isEmpty();
            held.release();

            MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertThat(registry.get("dynamolock.break").tag("outcome", "broken").tag("namespace", "ops").counter()
                    .count()).isEqualTo(1);
            assertThat(registry.get("dynamolock.break").tag("outcome", "not-found").counter().count()).isEqualTo(2);
            assertThat(logged.list).filteredOn(event -> event.getLevel() == Level.WARN)
                    .extracting(ILoggingEvent::getFormattedMessage)
                    .anyMatch(line -> line.startsWith("ops-alice asks to break the entry with ticket "
                            + held.fencingToken() + " of the lock entity='stuck' namespace='ops' at "));
        });
        ((Logger) LoggerFactory.getLogger(DynamoLockEndpoint.class)).detachAppender(logged);
    }

    static void assertStatusAndMessage(WebEndpointResponse<?> response, int status, String... fragments) {
        assertThat(response.getStatus()).isEqualTo(status);
        assertThat(response.getBody()).isInstanceOfSatisfying(DynamoLockEndpoint.ErrorDescriptor.class,
                error -> assertThat(error.message()).contains(fragments));
    }

    @Test
    void noEndpointUnlessExposedOrWithoutActuator() {
        contextRunner.run(context -> assertThat(context).doesNotHaveBean(DynamoLockEndpoint.class));
        contextRunner.withPropertyValues("management.endpoints.web.exposure.include=dynamolock")
                .withClassLoader(new FilteredClassLoader(Endpoint.class))
                .run(context -> assertThat(context).hasSingleBean(LockTemplate.class)
                        .doesNotHaveBean(DynamoLockEndpoint.class));
    }

    /** A {@code @QueueLocked} method of a bean that has no template of its own. */
    public static class Unlocked {

        @QueueLocked(entity = "#entity", maxWait = "0")
        public String run(String entity) {
            return entity;
        }
    }

    public interface Holding {

        boolean holding(String entity);
    }

    public static class LockedService implements Holding {

        private final LockTemplate locks;

        public LockedService(LockTemplate locks) {
            this.locks = locks;
        }

        @Override
        @QueueLocked(entity = "#entity", maxWait = "0")
        public boolean holding(String entity) {
            return locks.activeLocks().stream().anyMatch(lock -> lock.entity().equals(entity) && lock.holding());
        }
    }

    public static class Locked {

        private final LockTemplate locks;

        public Locked(LockTemplate locks) {
            this.locks = locks;
        }

        @QueueLocked(entity = "#entity", maxWait = "0")
        public boolean holding(String entity) {
            return locks.activeLocks().stream().anyMatch(lock -> lock.entity().equals(entity) && lock.holding());
        }
    }
}
