package io.dynamolock.annotation;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.annotation.scheduled.ReportJob;
import io.dynamolock.annotation.scheduled.ReportJobApplication;
import io.dynamolock.autoconfigure.DynamoDbLocalProperties;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.dynamolock.autoconfigure.DynamoLockAutoConfiguration;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.test.Await;
import io.dynamolock.core.test.DynamoDbLocal;
import io.dynamolock.core.test.FaultInjector;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A cluster-singleton {@code @Scheduled} job: two instances (application contexts with a template and a client
 * each) on one lock table tick every 50 ms; {@code onWaitTimeout = SKIP} and {@code minHold = 400ms}.
 */
@ExtendWith(OutputCaptureExtension.class)
class QueueLockedScheduledTests {

    @Test
    void oneInstanceRunsTheJobAtATimeAndTheOthersSkipQuietly(CapturedOutput output) throws Exception {
        ReportJob.Runs runs = ReportJob.Runs.reset(4);
        String table = "scheduled-" + UUID.randomUUID().toString().substring(0, 8);
        List<ConfigurableApplicationContext> instances = new ArrayList<>();
        double skipped;
        try {
            for (int i = 0; i < 2; i++) {
                instances.add(new SpringApplicationBuilder(ReportJobApplication.class)
                        // Two instances, no port: WebFlux on the test class path would start a server in each.
                        .web(WebApplicationType.NONE)
                        .properties(DynamoDbLocalProperties.of(table, "dynamolock.create-table=true",
                                "spring.main.banner-mode=off", "logging.level.io.dynamolock.annotation=debug"))
                        .run());
            }
            assertThat(runs.awaitRuns(60, TimeUnit.SECONDS)).as("the job ran 4 times").isTrue();
            skipped = instances.stream()
                    .mapToDouble(context -> context.getBean(MeterRegistry.class).find("dynamolock.skipped").counters()
                            .stream().mapToDouble(counter -> counter.count()).sum())
                    .sum();
        }
        finally {
            instances.forEach(ConfigurableApplicationContext::close);
        }

        assertThat(runs.overlaps()).as("never two runs at once").isZero();
        assertThat(runs.gapsBetweenStartsMillis()).as("each run held the lock for its minimum hold")
                .allMatch(gap -> gap >= 390);
        assertThat(skipped).as("ticks that found the lock busy were counted").isPositive();
        assertThat(runs.skipEvents()).as("and published").isPositive();
        assertThat(output.getAll()).as("a skip is one DEBUG line").contains("Skipped " + ReportJob.class.getName())
                .doesNotContain("ERROR").doesNotContain("LockWaitTimeoutException");
    }

    /**
     * A fail-closed job whose holder died (its renewals stopped): the lock never frees by itself, so every tick of
     * every instance would skip for ever. That skip is not routine: it is logged at WARN with the core's advice to
     * break the lock, at most once a minute per method, not as the DEBUG line of a busy lock.
     */
    @Test
    void aSkipBehindADeadFailClosedHolderWarnsWithTheAdviceToBreakIt() {
        DynamoDbLocal local = DynamoDbLocal.shared();
        String table = local.newLockTable();
        String entity = "payment-run-" + UUID.randomUUID();
        FaultInjector network = new FaultInjector();
        LockTemplate dying = LockTemplate.builder(network.clientFor(local, 1)).tableName(table)
                .leaseDuration(Duration.ofSeconds(2)).heartbeatInterval(Duration.ofMillis(500)).build();
        LockTemplate operator = LockTemplate.builder(local.client()).tableName(table).build();
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        Logger annotations = (Logger) LoggerFactory.getLogger(QueueLockedInterceptor.class);
        try {
            LockHandle dead = dying.acquire(LockRequest.builder(entity).failClosed(true).build());
            network.failAlways(FaultInjector.Step.RENEW, FaultInjector.Fault.TIMEOUT_BEFORE);
            Await.until(Duration.ofSeconds(20), "the dead holder's lease ended unrenewed",
                    () -> operator.queue(entity, "default").entries().get(0).isSilentAt(Instant.now()));
            logged.start();
            annotations.addAppender(logged);
            PaymentRun.RUNS.set(0);
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class,
                            DynamoLockAutoConfiguration.class))
                    .withPropertyValues(DynamoDbLocalProperties.of(table))
                    .withBean(PaymentRun.class)
                    .run(context -> {
                        PaymentRun job = context.getBean(PaymentRun.class);
                        job.run(entity);
                        job.run(entity);
                    });
            operator.breakLock(entity, "default", dead.fencingToken());
        }
        finally {
            annotations.detachAppender(logged);
            dying.close();
            operator.close();
        }
        assertThat(PaymentRun.RUNS).as("runs behind the dead holder").hasValue(0);
        assertThat(logged.list).as("WARN lines of the two skips")
                .filteredOn(event -> event.getLevel().isGreaterOrEqual(Level.WARN)).singleElement()
                .satisfies(event -> assertThat(event.getFormattedMessage())
                        .startsWith("Skipped " + PaymentRun.class.getName() + ".run(String)")
                        .contains("never expires. If its process is dead, break it"));
    }

    public static class PaymentRun {

        static final AtomicInteger RUNS = new AtomicInteger();

        @QueueLocked(entity = "#entity", maxWait = "0", onWaitTimeout = WaitTimeoutPolicy.SKIP, failClosed = true)
        public void run(String entity) {
            RUNS.incrementAndGet();
        }
    }
}
