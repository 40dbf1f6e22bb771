package io.dynamolock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The options of wake-up hints: defaults, checks, and a secret that never shows. */
class WakeUpOptionsTests {

    @Test
    void defaultsToEveryInterfaceAnEphemeralPortAndPlainHints() {
        WakeUpOptions options = WakeUpOptions.builder().build();
        assertThat(options.enabled()).isTrue();
        assertThat(options.bindAddress()).isEqualTo("0.0.0.0");
        assertThat(options.port()).isZero();
        assertThat(options.advertisedAddress()).isNull();
        assertThat(options.authenticated()).isFalse();
        assertThat(WakeUpOptions.disabled().enabled()).isFalse();
    }

    @Test
    void aSecretAuthenticatesAndNeverShowsInToString() {
        WakeUpOptions options = WakeUpOptions.builder().secret("0123456789abcdef-secret").port(7946)
                .advertisedAddress(" 10.0.0.7 ").build();
        assertThat(options.authenticated()).isTrue();
        assertThat(options.advertisedAddress()).isEqualTo("10.0.0.7");
        assertThat(options.toString()).doesNotContain("secret").contains("authenticated", "7946");
        assertThat(options).isEqualTo(WakeUpOptions.builder().secret("0123456789abcdef-secret").port(7946)
                .advertisedAddress("10.0.0.7").build());
    }

    @Test
    void refusesAShortSecretABadPortAndABlankBindAddress() {
        assertThatThrownBy(() -> WakeUpOptions.builder().secret("short").build())
                .isInstanceOf(LockOptionException.class).hasMessageContaining("at least 16");
        assertThatThrownBy(() -> WakeUpOptions.builder().port(70_000).build())
                .isInstanceOf(LockOptionException.class).hasMessageContaining("wakeUp.port 70000");
        assertThatThrownBy(() -> WakeUpOptions.builder().bindAddress(" ").build())
                .isInstanceOf(LockOptionException.class).hasMessageContaining("0.0.0.0");
    }
}
