package io.dynamolock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

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

    @ParameterizedTest
    @ValueSource(strings = {"10.0.0.9:abc", "10.0.0.9:70000", "10.0.0.9:-1", "10.0.0.9:0", "[fd00::1]:x",
            ":70000", ":-1", ":0", ":abc", "[fd00::1", "[fd00::1]7600"})
    void refusesAnAdvertisedAddressWithABadPortNamingIt(String advertised) {
        assertThatThrownBy(() -> WakeUpOptions.builder().advertisedAddress(advertised).build())
                .isInstanceOfSatisfying(LockOptionException.class,
                        ex -> assertThat(ex.option()).isEqualTo("wakeUp.advertisedAddress"))
                .hasMessageContaining("'" + advertised + "'").hasMessageContaining("1 to 65535");
    }

    /**
     * An address no instance sends a hint to (the any address, a multicast group, the broadcast address), or that is
     * no host at all (a URL, a bare "IPv6 address" that is none), is refused at once: its instance would start and
     * never be woken, with no word why.
     */
    @ParameterizedTest
    @ValueSource(strings = {"0.0.0.0", "0.0.0.0:7600", "[::]", "::", "[::]:7600", "224.0.0.1", "255.255.255.255:7600",
            "[ff02::1]:7600", "http://10.0.0.5:7946", "a:b:c"})
    void refusesAnAdvertisedAddressNoInstanceSendsTo(String advertised) {
        assertThatThrownBy(() -> WakeUpOptions.builder().advertisedAddress(advertised).build())
                .isInstanceOfSatisfying(LockOptionException.class,
                        ex -> assertThat(ex.option()).isEqualTo("wakeUp.advertisedAddress"))
                .hasMessageContaining("'" + advertised + "'").hasMessageContaining("bindAddress");
    }

    @Test
    void aPortAloneIsAdvertisedWithThisHostsAddress() {
        DynamoDbClient client = DynamoDbClient.builder().region(Region.EU_WEST_1).build();
        try (LockTemplate template = LockTemplate.builder(client).wakeUp(WakeUpOptions.builder()
                .bindAddress("127.0.0.1").advertisedAddress(":7600").build()).build()) {
            assertThat(template.wakeUpAddress()).isEqualTo("127.0.0.1:7600");
        }
        finally {
            client.close();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"10.0.0.9", "10.0.0.9:7600", "orders.internal:7600", "fd00::1", "[fd00::1]:7600",
            "127.0.0.1:7600", "[::1]:7600", "fe80::1%eth0", "[fe80::1%no-such-interface9]:7600"})
    void acceptsAnAdvertisedHostWithOrWithoutAPort(String advertised) {
        assertThat(WakeUpOptions.builder().advertisedAddress(advertised).build().advertisedAddress())
                .isEqualTo(advertised);
    }

    @Test
    void aBindAddressThatDoesNotResolveIsReportedAsTheBindAddress() {
        WakeUpOptions options = WakeUpOptions.builder().bindAddress("no-such-host.invalid").build();
        DynamoDbClient client = DynamoDbClient.builder().region(Region.EU_WEST_1).build();
        try {
            assertThatThrownBy(() -> LockTemplate.builder(client).wakeUp(options).build())
                    .isInstanceOfSatisfying(LockOptionException.class,
                            ex -> assertThat(ex.option()).isEqualTo("wakeUp.bindAddress"))
                    .hasMessageContaining("no-such-host.invalid");
        }
        finally {
            client.close();
        }
    }
}
