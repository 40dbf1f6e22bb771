package io.dynamolock.core.internal;

import static io.dynamolock.core.internal.HintCodecTests.CLOCK;
import static io.dynamolock.core.internal.HintCodecTests.KEY;
import static io.dynamolock.core.internal.HintCodecTests.NOW;
import static io.dynamolock.core.internal.HintCodecTests.SECRET;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dynamolock.core.test.Await;
import io.dynamolock.core.test.FaultInjector;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Wake-up endpoints over real loopback sockets: two on one host, each on a port from 0. */
class HintEndpointTests {

    private static final InetSocketAddress LOOPBACK_ANY_PORT = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    private final List<HintEndpoint> opened = new ArrayList<>();
    private final BlockingQueue<WakeUpHint> arrived = new LinkedBlockingQueue<>();

    @AfterEach
    void close() {
        opened.forEach(HintEndpoint::close);
    }

    private HintEndpoint endpoint(byte[] secret, java.util.function.Consumer<WakeUpHint> consumer) {
        HintEndpoint endpoint = new HintEndpoint(LOOPBACK_ANY_PORT, null,
                new HintCodec(secret, CLOCK, Duration.ofSeconds(5)), consumer);
        opened.add(endpoint);
        return endpoint;
    }

    private WakeUpHint next() throws InterruptedException {
        WakeUpHint hint = arrived.poll(10, TimeUnit.SECONDS);
        assertThat(hint).as("a hint arrived").isNotNull();
        return hint;
    }

    private static void sendRaw(HintEndpoint to, byte[] datagram) throws Exception {
        try (DatagramChannel raw = DatagramChannel.open()) {
            raw.send(ByteBuffer.wrap(datagram), to.boundAddress());
        }
    }

    @Test
    void twoEndpointsOnOneHostWithEphemeralPortsExchangeAuthenticatedHints() throws Exception {
        HintEndpoint a = endpoint(SECRET, hint -> { });
        HintEndpoint b = endpoint(SECRET, arrived::add);
        assertThat(a.boundAddress().getPort()).isNotZero().isNotEqualTo(b.boundAddress().getPort());
        assertThat(b.advertisedAddress()).isEqualTo("127.0.0.1:" + b.boundAddress().getPort());

        WakeUpHint hint = new WakeUpHint(KEY, "abc", NOW, HintCodecTests.withoutKey(HintCodecTests.item(3)));
        a.send(b.advertisedAddress(), hint);
        assertThat(next()).isEqualTo(hint);
        assertThat(a.sent()).isEqualTo(1);
        assertThat(b.received()).isEqualTo(1);
        assertThat(b.accepted()).isEqualTo(1);
        assertThat(b.rejected()).isZero();
    }

    /** A name lookup may block for seconds: a release's or a purge's thread must never wait for one. */
    @Test
    void aHintToAnIpAddressGoesOutOnTheCallersThreadAndOneToAHostNameOnTheSenderThread() throws Exception {
        HintEndpoint b = endpoint(SECRET, arrived::add);
        int port = b.boundAddress().getPort();
        CountDownLatch lookupAnswers = new CountDownLatch(1);
        Map<String, Thread> resolvedOn = new ConcurrentHashMap<>();
        HintEndpoint a = new HintEndpoint(LOOPBACK_ANY_PORT, null, new HintCodec(SECRET, CLOCK, Duration.ofSeconds(5)),
                hint -> { }, address -> {
                    resolvedOn.put(address, Thread.currentThread());
                    if (!HintEndpoint.isIpLiteral(address)) {
                        FaultInjector.await(lookupAnswers, 30); // a slow resolver
                        return new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
                    }
                    return HintEndpoint.socketAddress(address);
                });
        opened.add(a);
        WakeUpHint hint = new WakeUpHint(KEY, "abc", NOW, null);

        a.send("127.0.0.1:" + port, hint);
        assertThat(a.sent()).as("sent before send returned: no hand-over to another thread").isEqualTo(1);
        assertThat(resolvedOn.get("127.0.0.1:" + port)).isSameAs(Thread.currentThread());
        assertThat(next()).isEqualTo(hint);

        CompletableFuture.runAsync(() -> a.send("orders.internal:" + port, hint)).get(10, TimeUnit.SECONDS);
        Await.until(Duration.ofSeconds(10), "the name looked up", () -> resolvedOn.containsKey("orders.internal:" + port));
        assertThat(resolvedOn.get("orders.internal:" + port).getName()).startsWith("dynamolock-wake-up-sender-");
        lookupAnswers.countDown();
        assertThat(next()).isEqualTo(hint);

        assertThat(HintEndpoint.isIpLiteral("10.0.12.7:7070")).isTrue();
        assertThat(HintEndpoint.isIpLiteral("[fd00::1]:7070")).isTrue();
        assertThat(HintEndpoint.isIpLiteral("orders-7f9c.orders.svc.cluster.local:7070")).isFalse();
        assertThat(HintEndpoint.isIpLiteral("10.0.12.7.nip.io:7070")).isFalse();
        assertThat(HintEndpoint.isIpLiteral("999.1.1.1:7070")).as("looks like one, would go to a resolver").isFalse();
        assertThat(HintEndpoint.isIpLiteral("[orders.internal]:7070")).isFalse();
        assertThat(HintEndpoint.isIpLiteral("[dead.beef]:7070")).as("hex letters and dots: a name").isFalse();
        assertThat(HintEndpoint.isIpLiteral("[.1:2]:7070")).as("no hex digit or colon first: a name").isFalse();
        assertThat(HintEndpoint.isIpLiteral("[::1]:7070")).isTrue();
        assertThat(HintEndpoint.isIpLiteral("255.255.255.255:7070")).isTrue();
    }

    /**
     * Hosts that look like a bracketed IPv6 address but that the JDK hands to a resolver (it parses a host as an
     * address only if it starts with a hex digit or a colon, and has a colon): the sender thread's, never a release's.
     */
    @ParameterizedTest
    @ValueSource(strings = {"[dead.beef]:7070", "[.ad:be.ef]:7070"})
    void aBracketedNameIsLookedUpOnTheSenderThread(String address) throws Exception {
        Map<String, Thread> resolvedOn = new ConcurrentHashMap<>();
        HintEndpoint a = new HintEndpoint(LOOPBACK_ANY_PORT, null, new HintCodec(SECRET, CLOCK, Duration.ofSeconds(5)),
                hint -> { }, name -> {
                    resolvedOn.put(name, Thread.currentThread());
                    throw new IllegalArgumentException("Cannot resolve " + name);
                });
        opened.add(a);
        CompletableFuture.runAsync(() -> a.send(address, new WakeUpHint(KEY, "abc", NOW, null)))
                .get(10, TimeUnit.SECONDS);
        Await.until(Duration.ofSeconds(10), "the name looked up", () -> resolvedOn.containsKey(address));
        assertThat(resolvedOn.get(address).getName()).startsWith("dynamolock-wake-up-sender-");
    }

    /**
     * An entry's address is table data: whoever may write the item chooses it. No instance is reachable at the any
     * address, a multicast group or the broadcast address; and one that is not on loopback or link-local itself
     * sends nothing there (an agent listening there).
     */
    @Test
    void hintsGoOnlyWhereAnotherInstanceCanBe() throws Exception {
        HintEndpoint onLoopback = endpoint(SECRET, hint -> { });
        WakeUpHint hint = new WakeUpHint(KEY, "abc", NOW, null);
        for (String nowhere : List.of("0.0.0.0:7070", "224.0.0.1:7070", "255.255.255.255:7070", "[ff02::1]:7070")) {
            onLoopback.send(nowhere, hint);
        }
        assertThat(onLoopback.sent()).isZero();
        assertThat(onLoopback.dropped()).isEqualTo(4);

        try (DatagramChannel agent = DatagramChannel.open().bind(LOOPBACK_ANY_PORT)) {
            int agentPort = ((InetSocketAddress) agent.getLocalAddress()).getPort();
            HintEndpoint routable = new HintEndpoint(new InetSocketAddress("0.0.0.0", 0), "10.9.8.7:7946",
                    new HintCodec(null, CLOCK, Duration.ofSeconds(5)), h -> { });
            opened.add(routable);
            routable.send("127.0.0.1:" + agentPort, hint);
            routable.send("169.254.169.254:7070", hint);
            assertThat(routable.sent()).as("to loopback and link-local from an instance on neither").isZero();
            assertThat(routable.dropped()).isEqualTo(2);

            onLoopback.send("127.0.0.1:" + agentPort, hint);
            assertThat(onLoopback.sent()).as("an instance on loopback reaches others there").isOne();
        }
    }

    /**
     * README: loopback "only if it is on one itself". Two instances bound to every interface that advertise a name
     * of this host's loopback address (LOCALHOST, localhost.localdomain, a Debian host name's 127.0.1.1) are on
     * loopback, and hinted each other before.
     */
    @Test
    void instancesAdvertisedByANameOfTheirLoopbackAddressStillHintEachOther() throws Exception {
        Function<String, InetSocketAddress> hostsFile = address -> {
            int colon = address.lastIndexOf(':');
            String host = address.substring(0, colon);
            int port = Integer.parseInt(address.substring(colon + 1));
            return new InetSocketAddress(host.equals("devbox") ? "127.0.0.1" : host, port);
        };
        assertTwoEndpointsHintEachOther(new InetSocketAddress("0.0.0.0", 0), "devbox", hostsFile);
    }

    /** The same for link-local: an IPv6 link-local address is only usable with its scope, which no literal has. */
    @Test
    void instancesAdvertisedAtAScopedLinkLocalAddressStillHintEachOther() throws Exception {
        String linkLocal = null;
        for (NetworkInterface network : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            for (InetAddress address : Collections.list(network.getInetAddresses())) {
                if (network.isUp() && address instanceof Inet6Address && address.isLinkLocalAddress()) {
                    String text = address.getHostAddress();
                    linkLocal = "[" + text.substring(0, text.indexOf('%')) + "%" + network.getName() + "]";
                }
            }
        }
        assumeTrue(linkLocal != null, "no interface with a link-local address");
        assertTwoEndpointsHintEachOther(new InetSocketAddress("::", 0), linkLocal, HintEndpoint::socketAddress);
    }

    /**
     * Two plain endpoints bound to {@code bind}, both advertising {@code advertised}: a hint from one reaches the
     * other.
     */
    private void assertTwoEndpointsHintEachOther(InetSocketAddress bind, String advertised,
            Function<String, InetSocketAddress> resolver) throws InterruptedException {
        HintEndpoint a = new HintEndpoint(bind, advertised, new HintCodec(null, CLOCK, Duration.ofSeconds(5)),
                hint -> { }, resolver);
        opened.add(a);
        HintEndpoint b = new HintEndpoint(bind, advertised, new HintCodec(null, CLOCK, Duration.ofSeconds(5)),
                arrived::add, resolver);
        opened.add(b);
        WakeUpHint hint = new WakeUpHint(KEY, "abc", NOW, null);
        a.send(b.advertisedAddress(), hint);
        assertThat(arrived.poll(5, TimeUnit.SECONDS)).as("a hint from %s to %s", a.advertisedAddress(),
                b.advertisedAddress()).isEqualTo(hint);
    }

    @Test
    void duplicatedAndReorderedHintsArriveAsSent() throws Exception {
        HintEndpoint a = endpoint(SECRET, hint -> { });
        HintEndpoint b = endpoint(SECRET, arrived::add);
        WakeUpHint older = new WakeUpHint(KEY, "abc", NOW - 10, null);
        WakeUpHint newer = new WakeUpHint(KEY, "abc", NOW, null);
        a.send(b.advertisedAddress(), newer);
        a.send(b.advertisedAddress(), older);
        a.send(b.advertisedAddress(), newer);
        assertThat(List.of(next(), next(), next())).containsExactlyInAnyOrder(newer, older, newer);
    }

    @Test
    void garbageForgedStaleAndOversizedDatagramsAreCountedAndTheReceiverKeepsGoing() throws Exception {
        HintEndpoint b = endpoint(SECRET, arrived::add);
        HintCodec forger = new HintCodec("guessed".getBytes(), CLOCK, Duration.ofSeconds(5));
        HintCodec genuine = new HintCodec(SECRET, CLOCK, Duration.ofSeconds(5));
        HintCodec unsigned = new HintCodec(null, CLOCK, Duration.ofSeconds(5));
        byte[] garbage = new byte[100];
        new Random(7).nextBytes(garbage);

        sendRaw(b, garbage);
        sendRaw(b, new byte[0]);
        sendRaw(b, forger.encode(new WakeUpHint(KEY, "abc", NOW, HintCodecTests.item(2))));
        sendRaw(b, unsigned.encode(new WakeUpHint(KEY, "abc", NOW, null)));
        sendRaw(b, genuine.encode(new WakeUpHint(KEY, "abc", NOW - 60_000, null)));
        sendRaw(b, new byte[8000]);
        WakeUpHint sentinel = new WakeUpHint(KEY, "after", NOW, null);
        sendRaw(b, genuine.encode(sentinel));

        assertThat(next()).as("only the genuine, fresh hint is handed on").isEqualTo(sentinel);
        assertThat(arrived).isEmpty();
        assertThat(b.received()).isEqualTo(7);
        assertThat(b.rejected()).isEqualTo(6);
        assertThat(b.rejected(HintCodec.Rejection.BAD_MAC)).isEqualTo(1);
        assertThat(b.rejected(HintCodec.Rejection.UNAUTHENTICATED)).isEqualTo(1);
        assertThat(b.rejected(HintCodec.Rejection.STALE)).isEqualTo(1);
        assertThat(b.rejected(HintCodec.Rejection.OVERSIZED)).isEqualTo(1);
    }

    @Test
    void aConsumerThatThrowsDoesNotStopTheReceiver() throws Exception {
        HintEndpoint a = endpoint(null, hint -> { });
        HintEndpoint b = endpoint(null, hint -> {
            arrived.add(hint);
            throw new IllegalStateException("a broken consumer");
        });
        a.send(b.advertisedAddress(), new WakeUpHint(KEY, "one", NOW, null));
        a.send(b.advertisedAddress(), new WakeUpHint(KEY, "two", NOW, null));
        assertThat(List.of(next().entryId(), next().entryId())).containsExactlyInAnyOrder("one", "two");
    }

    @Test
    void sendingNeverThrowsWhateverTheAddress() throws Exception {
        HintEndpoint a = endpoint(SECRET, hint -> { });
        int closedPort;
        try (DatagramChannel gone = DatagramChannel.open().bind(LOOPBACK_ANY_PORT)) {
            closedPort = ((InetSocketAddress) gone.getLocalAddress()).getPort();
        }
        WakeUpHint hint = new WakeUpHint(KEY, "abc", NOW, null);
        assertThatCode(() -> {
            a.send("127.0.0.1:" + closedPort, hint); // nobody listens: lost, as UDP may lose anything
            a.send("not an address", hint);
            a.send(null, hint);
            a.send("127.0.0.1:99999", hint);
        }).doesNotThrowAnyException();
        // The endpoint still works afterwards.
        HintEndpoint b = endpoint(SECRET, arrived::add);
        a.send(b.advertisedAddress(), hint);
        assertThat(next()).isEqualTo(hint);
        assertThat(a.dropped()).isEqualTo(3);
    }

    @Test
    void advertisesTheConfiguredHostWithTheBoundPortUnlessAPortIsGiven() {
        HintEndpoint host = new HintEndpoint(LOOPBACK_ANY_PORT, "10.1.2.3",
                new HintCodec(null, CLOCK, Duration.ofSeconds(5)), hint -> { });
        opened.add(host);
        assertThat(host.advertisedAddress()).isEqualTo("10.1.2.3:" + host.boundAddress().getPort());
        HintEndpoint mapped = new HintEndpoint(LOOPBACK_ANY_PORT, "tasks.example.internal:31000",
                new HintCodec(null, CLOCK, Duration.ofSeconds(5)), hint -> { });
        opened.add(mapped);
        assertThat(mapped.advertisedAddress()).isEqualTo("tasks.example.internal:31000");
    }

    @Test
    void closeStopsTheThreadsAndFreesThePort() throws Exception {
        HintEndpoint b = endpoint(null, arrived::add);
        InetSocketAddress bound = b.boundAddress();
        b.close();
        assertThat(b.isRunning()).as("its receiver and sender threads have ended").isFalse();
        try (DatagramChannel again = DatagramChannel.open().bind(bound)) {
            assertThat(again.getLocalAddress()).isEqualTo(bound);
        }
        assertThatCode(() -> b.send("127.0.0.1:1", new WakeUpHint(KEY, "abc", NOW, null))).doesNotThrowAnyException();
    }
}
