package io.dynamolock.annotation;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.annotation.scheduled.ReportJob;
import io.dynamolock.annotation.scheduled.ReportJobApplication;
import io.dynamolock.autoconfigure.DynamoDbLocalProperties;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
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
}
