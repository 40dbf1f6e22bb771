package io.dynamolock.core.internal;

import io.dynamolock.core.LockOptionException;
import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The address a template advertises for its wake-up hints, {@code host:port}: how a configured one reads (a
 * {@code host}, {@code host:port}, a bare IPv6 address or {@code [v6]:port}), and the rule it must keep. Internal:
 * shared with {@code WakeUpOptions}, which checks it before anything is bound.
 */
public final class WakeUpAddress {

    private static final Logger log = LoggerFactory.getLogger(WakeUpAddress.class);

    private static final byte[] BROADCAST = {(byte) 255, (byte) 255, (byte) 255, (byte) 255};

    private WakeUpAddress() {
    }

    /**
     * A configured address read as host and port: {@code port} is {@code null} when it names none, {@code host}
     * empty when it names only a port ({@code :7600}: this host's address); {@code null} when it cannot be read.
     */
    private record Configured(String host, String port) {

        static Configured of(String value) {
            if (value.startsWith("[")) {
                int close = value.indexOf(']');
                if (close < 0) {
                    return null;
                }
                String rest = value.substring(close + 1);
                if (!rest.isEmpty() && !rest.startsWith(":")) {
                    return null;
                }
                return new Configured(value.substring(0, close + 1), rest.isEmpty() ? null : rest.substring(1));
            }
            int colon = value.lastIndexOf(':');
            if (colon < 0 || value.indexOf(':') != colon) {
                return new Configured(value, null); // a host name, an IPv4 address or a bare IPv6 address
            }
            return new Configured(value.substring(0, colon), value.substring(colon + 1));
        }
    }

    /**
     * @throws LockOptionException if {@code configured} cannot be read, names a port that is not 1 to 65535, or a
     *                             host no instance sends a hint to ({@link #neverSentTo})
     */
    public static void requireAdvertised(String configured) {
        if (configured == null) {
            return;
        }
        Configured read = Configured.of(configured);
        if (read == null || read.port() != null && portOf(read.port()) == 0) {
            throw new LockOptionException("wakeUp.advertisedAddress", configured, "wakeUp.advertisedAddress '"
                    + Printable.escape(configured) + "' names no UDP port others can send to; use host, host:port or"
                    + " :port with a port 1 to 65535 (a bare IPv6 address, or [address]:port)");
        }
        String refused = refusal(read.host());
        if (refused != null) {
            throw new LockOptionException("wakeUp.advertisedAddress", configured, "wakeUp.advertisedAddress '"
                    + Printable.escape(configured) + "' is " + refused + ": give the address other instances reach"
                    + " this one at, as host, host:port or [IPv6]:port, or leave it unset to advertise the"
                    + " bindAddress (or, bound to every interface, this host's address)");
        }
    }

    /**
     * Whether {@code address} is one no instance sends a hint to, whoever advertises it: the any address, a multicast
     * group, the IPv4 broadcast address.
     */
    static boolean neverSentTo(InetAddress address) {
        return address.isAnyLocalAddress() || address.isMulticastAddress()
                || address instanceof Inet4Address && Arrays.equals(address.getAddress(), BROADCAST);
    }

    /**
     * Why a configured host cannot be advertised, or {@code null}: an IP literal no instance sends to, or no host
     * at all (a URL, an IPv6 literal that is none). Read without asking DNS: a name is judged where it is sent to.
     */
    private static String refusal(String host) {
        if (host.isEmpty()) {
            return null; // a port alone: this host's address, found when bound
        }
        String bracketed = host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
        if (HintEndpoint.isIpLiteralHost(bracketed)) {
            try {
                // Without its zone (%eth0), which names an interface of the host that sends, not of this one.
                String unzoned = bracketed.replaceFirst("%[^\\]]*", "");
                return neverSentTo(InetAddress.getByName(unzoned)) ? "an address no instance sends a hint to (the"
                        + " any address, a multicast group, the broadcast address)" : null;
            }
            catch (UnknownHostException notALiteral) {
                return "no IP address";
            }
        }
        boolean url = host.chars().anyMatch(c -> c == ':' || c == '[' || c == '/' || c == '@' || c == '?' || c == '#'
                || c <= ' ');
        return url ? "no host name or IP address (a URL?)" : null;
    }

    /** The port, or 0 if {@code port} is not one. */
    private static int portOf(String port) {
        try {
            int value = Integer.parseInt(port);
            return value >= 1 && value <= 65_535 ? value : 0;
        }
        catch (NumberFormatException ex) {
            return 0;
        }
    }

    /**
     * What an entry carries: the configured host and port, the bound port if it names none, and the bound address
     * (this host's, if bound to every interface: {@link #thisHost}) if nothing is configured.
     */
    static String advertised(String configured, InetSocketAddress bound) throws IOException {
        return advertised(configured, bound, InetAddress::getLocalHost, WakeUpAddress::routeSource,
                WakeUpAddress::interfaceAddresses);
    }

    /** A lookup of this host's addresses, which may fail. */
    interface Lookup<T> {
        T get() throws IOException;
    }

    /**
     * The address this host sends from towards other hosts: its default route's source, found by connecting a UDP
     * socket to a documentation address (which sends nothing); {@code null} if it has no such route.
     */
    private static InetAddress routeSource() {
        for (String elsewhere : List.of("198.51.100.7", "2001:db8::7")) {
            try (DatagramSocket probe = new DatagramSocket()) {
                probe.connect(InetAddress.getByName(elsewhere), 9);
                InetAddress source = probe.getLocalAddress();
                if (source != null && !source.isAnyLocalAddress()) {
                    return source;
                }
            }
            catch (IOException | RuntimeException noRoute) {
                // try the other family
            }
        }
        return null;
    }

    /** Names of bridges only this host reaches through (containers, VMs): on other hosts they are their own. */
    private static final List<String> LOCAL_BRIDGES = List.of("docker", "br-", "virbr", "veth", "cni", "flannel",
            "cali", "lxcbr", "podman");

    /**
     * The addresses of this host's interfaces that are up, in the order the system numbered them (Java lists them
     * the other way round on Linux), loopback, virtual and local bridges left out.
     */
    private static List<InetAddress> interfaceAddresses() throws IOException {
        List<NetworkInterface> networks = new ArrayList<>(Collections.list(NetworkInterface.getNetworkInterfaces()));
        networks.sort(Comparator.comparingInt(NetworkInterface::getIndex));
        List<InetAddress> addresses = new ArrayList<>();
        for (NetworkInterface network : networks) {
            if (network.isUp() && !network.isLoopback() && !network.isVirtual()
                    && LOCAL_BRIDGES.stream().noneMatch(network.getName()::startsWith)) {
                addresses.addAll(Collections.list(network.getInetAddresses()));
            }
        }
        return addresses;
    }

    /**
     * As {@link #advertised(String, InetSocketAddress)}, with this host's name, its route's source and its
     * interfaces looked up as given.
     */
    static String advertised(String configured, InetSocketAddress bound, Lookup<InetAddress> localHost,
            Lookup<InetAddress> routeSource, Lookup<List<InetAddress>> interfaces) throws IOException {
        String host = null;
        int port = bound.getPort();
        Configured read = configured == null || configured.isBlank() ? null : Configured.of(configured.strip());
        if (read != null) { // checked by requireAdvertised when the options were built
            host = read.host();
            if (read.port() != null) {
                port = portOf(read.port());
            }
        }
        if (host == null || host.isEmpty()) {
            InetAddress address = bound.getAddress();
            host = (address.isAnyLocalAddress() ? thisHost(localHost, routeSource, interfaces) : address)
                    .getHostAddress();
        }
        if (host.indexOf(':') >= 0 && !host.startsWith("[")) {
            host = "[" + host + "]";
        }
        return host + ":" + port;
    }

    /**
     * The address others reach this host at: what its name resolves to, unless that is loopback (Debian and Ubuntu
     * map the host name to 127.0.1.1) or nothing (a container without its name in /etc/hosts); then the address it
     * sends from towards other hosts (not a container bridge's, which every Docker host has for itself); then an
     * address of an interface, IPv4 first. Loopback only if the host has no other, with a warning: then only
     * instances on this host can hint each other.
     */
    private static InetAddress thisHost(Lookup<InetAddress> localHost, Lookup<InetAddress> routeSource,
            Lookup<List<InetAddress>> interfaces) throws IOException {
        InetAddress named;
        try {
            named = localHost.get();
        }
        catch (UnknownHostException unnamed) {
            named = null;
        }
        if (named != null && !named.isLoopbackAddress()) {
            return named;
        }
        InetAddress routed = routeSource.get();
        if (routed != null && !routed.isLoopbackAddress() && !routed.isAnyLocalAddress()
                && !routed.isLinkLocalAddress()) {
            return routed;
        }
        InetAddress chosen = interfaces.get().stream()
                .filter(address -> !address.isLoopbackAddress() && !address.isLinkLocalAddress()
                        && !address.isAnyLocalAddress())
                .min(Comparator.comparingInt(address -> address instanceof Inet4Address ? 0 : 1))
                .orElse(null);
        if (chosen != null) {
            return chosen;
        }
        InetAddress loopback = named != null ? named : InetAddress.getLoopbackAddress();
        log.warn("Wake-up hints: this host has no address but {}, so only instances on this host can send it"
                + " hints; set dynamolock.wake-up.advertised-address (WakeUpOptions.advertisedAddress) to the"
                + " address other instances reach it at", loopback.getHostAddress());
        return loopback;
    }
}
