package io.dynamolock.integration;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.autoconfigure.DynamoDbLocalProperties;
import io.dynamolock.autoconfigure.DynamoLockAutoConfiguration;
import io.dynamolock.autoconfigure.DynamoLockIntegrationAutoConfiguration;
import io.dynamolock.core.LockInfo;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.QueueSnapshot;
import io.dynamolock.core.test.LockFixture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.leader.event.OnGrantedEvent;
import org.springframework.integration.leader.event.OnRevokedEvent;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * Spring Integration's {@link LockRegistryLeaderInitiator} on the auto-configured registry:
 * each application context is one candidate, all on one table of DynamoDB Local, with a 2 s
 * lease renewed every 500 ms.
 */
class LeaderElectionTests {

    private static final String ROLE = "billing-leader";

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final LockFixture fixture = new LockFixture();

    private final Timeline timeline = new Timeline();

    private final ApplicationContextRunner candidates = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DynamoLockAutoConfiguration.class,
                    DynamoLockIntegrationAutoConfiguration.class))
            .withPropertyValues(DynamoDbLocalProperties.of(fixture.table(), "dynamolock.lease-duration=2s",
                    "dynamolock.heartbeat-interval=500ms", "dynamolock.poll-interval.min=20ms",
                    "dynamolock.poll-interval.max=200ms"))
            .withBean(Timeline.class, () -> timeline)
            .withUserConfiguration(Candidacy.class);

    @AfterEach
    void close() throws Exception {
        fixture.close();
    }

    @Test
    void firstCandidateLeadsAndLeadershipMovesOnWhenItsContextStops() {
        candidates.withPropertyValues("candidate=a").run(a -> {
            timeline.await("a granted");
            candidates.withPropertyValues("candidate=b").run(b -> {
                fixture.awaitQueueLength(ROLE, 2);
                assertThat(timeline.events()).containsExactly("a granted");

                List<String> entriesOfA = a.getBean(LockTemplate.class).activeLocks().stream()
                        .map(LockInfo::entryId).toList();
                a.close();
                assertThat(entriesOfA).as("a held the role").isNotEmpty();
                assertThat(fixture.queue(ROLE)).as("a left the queue before its context was closed")
                        .noneMatch(entry -> entriesOfA.contains(entry.entryId()));
                timeline.await("b granted");
                assertThat(timeline.events()).doesNotContain("b revoked");
            });
        });
    }

    @Test
    void waitingCandidatesLeadInArrivalOrder() {
        // Waiting candidates keep their place for a heartbeat of the initiator: make it long.
        ApplicationContextRunner patient = candidates.withPropertyValues("candidate.heart-beat-millis=60000");
        patient.withPropertyValues("candidate=a").run(a -> {
            timeline.await("a granted");
            patient.withPropertyValues("candidate=b").run(b -> {
                fixture.awaitQueueLength(ROLE, 2);
                patient.withPropertyValues("candidate=c").run(c -> {
                    fixture.awaitQueueLength(ROLE, 3);
                    a.close();
                    timeline.await("b granted");
                    assertThat(timeline.events()).doesNotContain("c granted");
                    b.close();
                    timeline.await("c granted");
                });
            });
        });
        assertThat(timeline.events()).filteredOn(event -> event.endsWith("granted"))
                .containsExactly("a granted", "b granted", "c granted");
    }

    @Test
    void leaderWhoseProcessDiesIsReplacedAfterTheLease() {
        candidates.withPropertyValues("candidate=a").run(a -> {
            timeline.await("a granted");
            candidates.withPropertyValues("candidate=b").run(b -> {
                fixture.awaitQueueLength(ROLE, 2);
                // A crash: heartbeats stop and nothing is released.
                long diedAt = System.nanoTime();
                a.getBean(LockTemplate.class).close();

                timeline.await("b granted");
                assertThat(Duration.ofNanos(System.nanoTime() - diedAt)).as("b waited for a's lease to run out")
                        .isGreaterThanOrEqualTo(LockFixture.LEASE.minus(LockFixture.HEARTBEAT));
                assertThat(fixture.queue(ROLE)).singleElement().extracting(QueueSnapshot.Entry::owner)
                        .asString().startsWith(b.getBean(LockTemplate.class).ownerName());
                timeline.await("a revoked");
            });
        });
    }

    /** A leader whose lease is lost while its process lives (another process purged its entry) is revoked. */
    @Test
    void aLeaderWhoseEntryIsPurgedIsRevokedAndStandsAgain() {
        candidates.withPropertyValues("candidate=a").run(a -> {
            timeline.await("a granted");
            candidates.withPropertyValues("candidate=b").run(b -> {
                fixture.awaitQueueLength(ROLE, 2);
                QueueSnapshot.Entry leader = fixture.queue(ROLE).get(0);
                assertThat(leader.owner()).startsWith(a.getBean(LockTemplate.class).ownerName());
                fixture.purge(ROLE, leader.entryId());
                timeline.await("b granted");
                timeline.await("a revoked");
                fixture.awaitQueueLength(ROLE, 2); // a stands again behind b
                assertThat(fixture.queue(ROLE).get(0).owner()).startsWith(b.getBean(LockTemplate.class).ownerName());
            });
        });
    }

    /** A leader that yields is revoked, and the next candidate leads. */
    @Test
    void aLeaderThatYieldsIsRevokedAndTheNextLeads() {
        candidates.withPropertyValues("candidate=a").run(a -> {
            timeline.await("a granted");
            candidates.withPropertyValues("candidate=b").run(b -> {
                fixture.awaitQueueLength(ROLE, 2);
                a.getBean(LockRegistryLeaderInitiator.class).getContext().yield();
                timeline.await("a revoked");
                timeline.await("b granted");
                fixture.awaitQueueLength(ROLE, 2);
                assertThat(fixture.queue(ROLE).get(0).owner()).startsWith(b.getBean(LockTemplate.class).ownerName());
                assertThat(timeline.events()).containsSubsequence("a granted", "a revoked", "b granted");
            });
        });
    }


    /** One candidate for {@link #ROLE}, named by the property {@code candidate}. */
    @Configuration(proxyBeanMethods = false)
    static class Candidacy {

        @Bean
        LockRegistryLeaderInitiator leaderInitiator(LockRegistry lockRegistry, Environment environment) {
            LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(lockRegistry,
                    new DefaultCandidate(environment.getRequiredProperty("candidate"), ROLE));
            initiator.setHeartBeatMillis(environment.getProperty("candidate.heart-beat-millis", Long.class,
                    LockRegistryLeaderInitiator.DEFAULT_HEART_BEAT_TIME));
            return initiator;
        }

        @Bean
        ApplicationListener<ApplicationEvent> leadershipEvents(Timeline timeline, Environment environment) {
            String candidate = environment.getRequiredProperty("candidate");
            return event -> {
                if (event instanceof OnGrantedEvent) {
                    timeline.add(candidate + " granted");
                }
                else if (event instanceof OnRevokedEvent) {
                    timeline.add(candidate + " revoked");
                }
            };
        }
    }

    /** The leadership events of all candidates, in the order they happened. */
    static final class Timeline {

        private final List<String> events = new ArrayList<>();

        synchronized void add(String event) {
            events.add(event);
            notifyAll();
        }

        synchronized List<String> events() {
            return List.copyOf(events);
        }

        synchronized void await(String event) throws InterruptedException {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (!events.contains(event)) {
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    throw new AssertionError("No '" + event + "' within " + WAIT + "; events: " + events);
                }
                TimeUnit.NANOSECONDS.timedWait(this, remaining);
            }
        }
    }
}
