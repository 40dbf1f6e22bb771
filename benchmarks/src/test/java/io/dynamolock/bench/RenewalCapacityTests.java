package io.dynamolock.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RenewalCapacityTests {

    private static final RenewalCapacityScenario.Settings SETTINGS = RenewalCapacityScenario.Settings.scenario(100,
            Duration.ofSeconds(6));

    /** A run of 100 locks that took {@code acquired}, counted {@code enqueues} and delayed {@code delayed} renewals. */
    private static RenewalCapacityScenario.Result result(long acquired, long enqueues, long delayed) {
        return new RenewalCapacityScenario.Result(SETTINGS, acquired, 100 - acquired, 1.0, enqueues, 3, 3, 3, 6, 16, 3,
                2, 10_000_000, 12_000_000, 600, delayed, 12.0, 1_000);
    }

    @Test
    void runIsValidWhenRenewalsWereDelayedAndEveryLockTaken() {
        assertThat(result(100, 100, 1).problems()).isEmpty();
    }

    @Test
    void runIsInvalidWhenNoRenewalWasDelayed() {
        assertThat(result(100, 100, 0).problems()).singleElement().asString().contains("no renewal was delayed");
    }

    @Test
    void runIsInvalidWhenLocksWereNotTakenOrEnqueuesMiscounted() {
        assertThat(result(99, 99, 5).problems()).singleElement().asString().contains("took 99 of 100");
        assertThat(result(100, 101, 5).problems()).singleElement().asString().contains("101 enqueues for 100");
    }

    @Test
    void scenarioSettingsRenewAThirdOfTheLeaseAndHoldForTwoLeases() {
        assertThat(SETTINGS.heartbeat()).isEqualTo(Duration.ofSeconds(2));
        assertThat(SETTINGS.hold()).isEqualTo(Duration.ofSeconds(12));
        assertThat(SETTINGS.renewalRoundTrip()).isEqualTo(Duration.ofMillis(200));
        assertThat(SETTINGS.renewalsNeededPerSecond()).isEqualTo(50.0);
    }

    @Test
    void profileArgumentsAreLocksRenewalLeaseAndHoldWithHalfLeaseHeartbeat() {
        RenewalCapacityScenario.Settings settings = RenewalCapacityMain.settings("300", "200", "6", "10");
        assertThat(settings).isEqualTo(new RenewalCapacityScenario.Settings(300, Duration.ofSeconds(6),
                Duration.ofSeconds(3), Duration.ofMillis(200), Duration.ofSeconds(10)));
        assertThat(RenewalCapacityMain.settings()).isEqualTo(new RenewalCapacityScenario.Settings(10_000,
                Duration.ofSeconds(60), Duration.ofSeconds(30), Duration.ofMillis(200), Duration.ofSeconds(150)));
        assertThatIllegalArgumentException().isThrownBy(() -> RenewalCapacityMain.settings("300", "0"))
                .withMessageContaining("renewalMs");
    }
}
