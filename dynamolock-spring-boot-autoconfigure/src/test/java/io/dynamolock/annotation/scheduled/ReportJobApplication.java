package io.dynamolock.annotation.scheduled;

import io.dynamolock.annotation.QueueLockedSkippedEvent;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.event.EventListener;
import org.springframework.scheduling.annotation.EnableScheduling;

/** One instance of an application whose only job is {@link ReportJob}. */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableScheduling
@Import(ReportJob.class)
public class ReportJobApplication {

    @Bean
    MeterRegistry meterRegistry() {
        return new SimpleMeterRegistry();
    }

    @EventListener
    void skipped(QueueLockedSkippedEvent event) {
        ReportJob.Runs.current().skipped();
    }
}
