package io.dynamolock.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The address an endpoint bound to every interface advertises when none is configured. */
class WakeUpAddressTests {

    private static final InetSocketAddress EVERY_INTERFACE = new InetSocketAddress(7600);

    /** A host with no route to other hosts. */
    private static final WakeUpAddress.Lookup<InetAddress> NO_ROUTE = () -> null;

    @Test
    void aHostNameThatResolvesToAnAddressOfThisHostIsAdvertised() throws Exception {
        assertThat(WakeUpAddress.advertised(null, EVERY_INTERFACE, () -> address("10.0.3.7"), NO_ROUTE,
                () -> List.of(address("10.0.3.7"), address("127.0.0.1")))).isEqualTo("10.0.3.7:7600");
    }

    /** Debian and Ubuntu map the host name to 127.0.1.1: others would send their hints to their own loopback. */
    @Test
    void aHostNameThatResolvesToLoopbackGivesWayToAnInterfaceAddressIPv4First() throws Exception {
        assertThat(WakeUpAddress.advertised(null, EVERY_INTERFACE, () -> address("127.0.1.1"), NO_ROUTE,
                () -> List.of(address("127.0.0.1"), address("fe80::1"), address("2001:db8::7"), address("10.0.3.7"))))
                .isEqualTo("10.0.3.7:7600");
        assertThat(WakeUpAddress.advertised(null, EVERY_INTERFACE, () -> address("127.0.1.1"), NO_ROUTE,
                () -> List.of(address("fe80::1"), address("2001:db8::7")))).isEqualTo("[2001:db8:0:0:0:0:0:7]:7600");
    }

    /**
     * A Docker host whose name is on loopback: its docker0 bridge (172.17.0.1) is every Docker host's own, so the
     * address it sends from towards other hosts is the one to advertise, whatever order the interfaces come in.
     */
    @Test
    void aHostNameOnLoopbackGivesWayToTheAddressThisHostSendsFromTowardsOthersNotABridge() throws Exception {
        assertThat(WakeUpAddress.advertised(null, EVERY_INTERFACE, () -> address("127.0.1.1"),
                () -> address("10.0.0.5"), () -> List.of(address("172.17.0.1"), address("10.0.0.5"))))
                .isEqualTo("10.0.0.5:7600");
    }

    @Test
    void aHostNameThatDoesNotResolveGivesWayToAnInterfaceAddress() throws Exception {
        assertThat(WakeUpAddress.advertised(null, EVERY_INTERFACE, () -> {
            throw new UnknownHostException("container-7f3a: Name or service not known");
        }, NO_ROUTE, () -> List.of(address("172.17.0.5")))).isEqualTo("172.17.0.5:7600");
    }

    /** One host only (a laptop offline): loopback still lets its instances hint each other. */
    @Test
    void loopbackIsAdvertisedOnlyWhenThisHostHasNoOtherAddress() throws Exception {
        assertThat(WakeUpAddress.advertised(null, EVERY_INTERFACE, () -> address("127.0.1.1"), NO_ROUTE,
                () -> List.of(address("127.0.0.1")))).isEqualTo("127.0.1.1:7600");
    }

    @Test
    void aConfiguredHostOrABoundAddressIsAdvertisedAsItIs() throws Exception {
        WakeUpAddress.Lookup<InetAddress> unused = () -> {
            throw new AssertionError("not looked up");
        };
        assertThat(WakeUpAddress.advertised("orders.internal", EVERY_INTERFACE, unused, unused, List::of))
                .isEqualTo("orders.internal:7600");
        assertThat(WakeUpAddress.advertised(":7700", new InetSocketAddress(address("127.0.0.1"), 7600), unused,
                unused, List::of)).isEqualTo("127.0.0.1:7700");
    }

    private static InetAddress address(String literal) throws UnknownHostException {
        return InetAddress.getByName(literal);
    }
}
