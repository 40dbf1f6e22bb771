package io.dynamolock.core.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One process's UDP endpoint for wake-up hints: it receives hints on one daemon thread and sends them through
 * one bound, non-blocking {@link DatagramChannel} (so hints come from the port others are told about).
 *
 * <p>Sending is fire-and-forget and never blocks or throws on the protocol's path (a release, a purge). A hint
 * to an IP address goes out at once on the caller's thread: encoding and the HMAC take microseconds, and the
 * non-blocking system call drops the datagram if the socket's buffer is full; a hand-over to another thread
 * would cost the handoff more than that, on a busy machine a millisecond or more. A hint to a host name goes to
 * a bounded queue and a sender thread, which does the name resolution that may block; a full queue drops the
 * hint. A dropped hint costs the addressee a poll, never safety. The receiver decodes and verifies every
 * datagram ({@link HintCodec}) and hands a valid hint to the consumer; nothing a datagram or the consumer does
 * ends its loop, only {@link #close()} does.
 */
final class HintEndpoint implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(HintEndpoint.class);

    private static final String OCTET = "(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
    /**
     * Hosts that the JDK turns into an address without asking a resolver: IPv4, and IPv6 in brackets. An IPv6
     * address starts with a hex digit or a colon and has a colon: otherwise ({@code [dead.beef]}, {@code [.1:2]})
     * the JDK asks a resolver; so shaped but not an address, it refuses without asking. A link-local one has its scope ({@code [fe80::1%eth0]}), an interface.
     */
    private static final Pattern IP_LITERAL = Pattern.compile(OCTET + "(\\." + OCTET + "){3}"
            + "|\\[([0-9A-Fa-f][0-9A-Fa-f.]*)?:[0-9A-Fa-f:.]*(%[0-9A-Za-z_.-]+)?\\]");

    /** How often the sender thread looks up an advertised name, to know whether this endpoint is on loopback. */
    static final Duration OWN_NAME_LOOKUP = Duration.ofMinutes(1);

    /** Hints waiting to be sent at most; more are dropped. */
    static final int SEND_QUEUE = 1024;

    private record Outgoing(String address, WakeUpHint hint) {
    }

    private final DatagramChannel channel;
    private final Selector readable;
    private final HintCodec codec;
    private final Consumer<WakeUpHint> consumer;
    private final Function<String, InetSocketAddress> resolver;
    private final String advertised;
    /**
     * Whether this endpoint is on loopback, or on a link-local address: only then may it send there. From the bound
     * address and an advertised IP address at once; an advertised name is looked up on the sender thread, at its
     * start and then every {@link #OWN_NAME_LOOKUP} (names move).
     */
    private volatile boolean onLoopback;
    private volatile boolean onLinkLocal;
    private final boolean boundToLoopback;
    private final boolean boundToLinkLocal;
    private final BlockingQueue<Outgoing> outgoing = new ArrayBlockingQueue<>(SEND_QUEUE);
    private final Thread receiver;
    private final Thread sender;
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong received = new AtomicLong();
    private final AtomicLong accepted = new AtomicLong();
    private final Map<HintCodec.Rejection, AtomicLong> rejected = new EnumMap<>(HintCodec.Rejection.class);
    private volatile boolean closed;

    /**
     * Binds the endpoint and starts its threads.
     *
     * @param bind       where to receive; port 0 takes a free one
     * @param advertised how others reach this endpoint: {@code host}, {@code host:port} or {@code null}. A missing
     *                   port is the bound one; a missing host is the bound address, or this host's address if
     *                   bound to all (behind NAT, as in ECS bridge mode or Kubernetes, configure it)
     * @throws UncheckedIOException if the address cannot be bound
     */
    HintEndpoint(InetSocketAddress bind, String advertised, HintCodec codec, Consumer<WakeUpHint> consumer) {
        this(bind, advertised, codec, consumer, HintEndpoint::socketAddress);
    }

    /** As above, with {@code resolver} turning {@code host:port} into where to send (tests watch its thread). */
    HintEndpoint(InetSocketAddress bind, String advertised, HintCodec codec, Consumer<WakeUpHint> consumer,
            Function<String, InetSocketAddress> resolver) {
        this.codec = codec;
        this.consumer = consumer;
        this.resolver = resolver;
        for (HintCodec.Rejection why : HintCodec.Rejection.values()) {
            rejected.put(why, new AtomicLong());
        }
        DatagramChannel opened = null;
        Selector selector = null;
        InetSocketAddress listening;
        try {
            opened = bind.getAddress() instanceof java.net.Inet6Address
                    ? DatagramChannel.open(StandardProtocolFamily.INET6) : DatagramChannel.open();
            opened.bind(bind);
            opened.configureBlocking(false);
            selector = Selector.open();
            opened.register(selector, SelectionKey.OP_READ);
            listening = (InetSocketAddress) opened.getLocalAddress();
            this.advertised = WakeUpAddress.advertised(advertised, listening);
        }
        catch (IOException | RuntimeException ex) {
            closeQuietly(opened);
            closeQuietly(selector);
            if (ex instanceof IOException io) {
                throw new UncheckedIOException("Cannot bind the wake-up endpoint to " + bind + ": " + io.getMessage(),
                        io);
            }
            throw (RuntimeException) ex;
        }
        this.channel = opened;
        this.readable = selector;
        this.boundToLoopback = listening.getAddress().isLoopbackAddress();
        this.boundToLinkLocal = listening.getAddress().isLinkLocalAddress();
        learnWhereItIs(literalHost(this.advertised));
        this.receiver = Workers.daemonThreads("dynamolock-wake-up-receiver-").newThread(this::receive);
        this.sender = Workers.daemonThreads("dynamolock-wake-up-sender-").newThread(this::sendQueued);
        receiver.start();
        sender.start();
        log.info("Wake-up hints: listening on {}, advertised to other instances as {}", listening, this.advertised);
    }

    /** {@code host:port} as others should address this endpoint: what an entry carries in the item. */
    String advertisedAddress() {
        return advertised;
    }

    /** The address and port the endpoint is bound to. */
    InetSocketAddress boundAddress() {
        try {
            return (InetSocketAddress) channel.getLocalAddress();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * Sends {@code hint} to the endpoint at {@code address} ({@code host:port}): at once if the host is an IP
     * address, else later, on the sender thread. Never blocks and never throws: a hint that cannot go out is
     * dropped.
     */
    void send(String address, WakeUpHint hint) {
        if (closed || address == null) {
            dropped.incrementAndGet();
        }
        else if (isIpLiteral(address)) {
            transmit(new Outgoing(address, hint));
        }
        else if (!outgoing.offer(new Outgoing(address, hint))) {
            dropped.incrementAndGet();
        }
    }

    /** Whether {@code hint} goes out with its item: it fits a datagram, and hints are authenticated. */
    boolean carriesItem(WakeUpHint hint) {
        return codec.carriesItem(hint);
    }

    /**
     * Whether the host of {@code host:port} is an IPv4 address or a bracketed IPv6 one, so that sending needs no
     * name lookup, which could block. The address comes from the item, which anyone with write access can shape:
     * what only looks like an address ({@code 999.1.1.1}, {@code [name]}) goes the slow way.
     */
    static boolean isIpLiteral(String address) {
        int colon = address.lastIndexOf(':');
        String host = colon < 0 ? address : address.substring(0, colon);
        return isIpLiteralHost(host);
    }

    /** Whether {@code host} is an IP address as such: four numbers up to 255, or {@code [IPv6]}. */
    static boolean isIpLiteralHost(String host) {
        return IP_LITERAL.matcher(host).matches();
    }

    /** Datagrams sent. */
    long sent() {
        return sent.get();
    }

    /** Hints not sent: the queue was full, the address unusable, or the hint too long for a datagram. */
    long dropped() {
        return dropped.get();
    }

    /** Datagrams received, valid or not. */
    long received() {
        return received.get();
    }

    /** Datagrams received that were handed to the consumer. */
    long accepted() {
        return accepted.get();
    }

    /** Datagrams received and rejected, for any reason. */
    long rejected() {
        return rejected.values().stream().mapToLong(AtomicLong::get).sum();
    }

    long rejected(HintCodec.Rejection why) {
        return rejected.get(why).get();
    }

    private void receive() {
        // One byte more than a hint may have: a longer datagram is cut to this length and so detected.
        ByteBuffer buffer = ByteBuffer.allocate(HintCodec.MAX_DATAGRAM_BYTES + 1);
        while (!closed) {
            try {
                readable.select();
                readable.selectedKeys().clear();
                buffer.clear();
                for (SocketAddress from = channel.receive(buffer); from != null; from = channel.receive(buffer)) {
                    accept(from, buffer);
                    buffer.clear();
                }
            }
            catch (ClosedChannelException | ClosedSelectorException closing) {
                return;
            }
            catch (IOException | RuntimeException ex) {
                // A hint is only ever a shortcut: whatever went wrong, the waiters still poll. A pause, so that a
                // failure that repeats (a broken selector) does not spin this thread.
                if (!closed) {
                    log.debug("Receiving a wake-up hint failed", ex);
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
                }
            }
            catch (Error ex) {
                log.error("Receiving a wake-up hint failed", ex);
            }
        }
    }

    private void accept(SocketAddress from, ByteBuffer buffer) {
        received.incrementAndGet();
        HintCodec.Decoded decoded = codec.decode(buffer.array(), buffer.position());
        if (decoded.rejection() != null) {
            rejected.get(decoded.rejection()).incrementAndGet();
            log.debug("Rejected a wake-up datagram from {}: {}", from, decoded.rejection());
            return;
        }
        accepted.incrementAndGet();
        try {
            consumer.accept(decoded.hint());
        }
        catch (RuntimeException ex) {
            log.debug("Handling a wake-up hint failed", ex);
        }
    }

    /** Where this endpoint is, from the bound address and {@code advertisedHost} (or {@code null}, not known). */
    private void learnWhereItIs(InetAddress advertisedHost) {
        onLoopback = boundToLoopback || advertisedHost != null && advertisedHost.isLoopbackAddress();
        onLinkLocal = boundToLinkLocal || advertisedHost != null && advertisedHost.isLinkLocalAddress();
    }

    private void sendQueued() {
        long ownNameLookedUp = System.nanoTime() - OWN_NAME_LOOKUP.toNanos();
        while (!closed) {
            if (!isIpLiteral(advertised) && System.nanoTime() - ownNameLookedUp >= OWN_NAME_LOOKUP.toNanos()) {
                ownNameLookedUp = System.nanoTime();
                try {
                    learnWhereItIs(resolver.apply(advertised).getAddress());
                }
                catch (RuntimeException unresolved) {
                    log.debug("Cannot look up this endpoint's advertised address {}", advertised, unresolved);
                }
            }
            Outgoing next;
            try {
                next = outgoing.poll(1, TimeUnit.SECONDS);
            }
            catch (InterruptedException closing) {
                return;
            }
            if (next != null) {
                transmit(next);
            }
        }
    }

    /** Encodes and sends one hint without blocking; counts it as sent or dropped. */
    private void transmit(Outgoing next) {
        try {
            InetSocketAddress to = resolver.apply(next.address());
            if (!mayReach(to.getAddress())) {
                dropped.incrementAndGet();
                log.debug("Not sending a wake-up hint to {}: no instance of this one's network can be there",
                        next.address());
                return;
            }
            byte[] datagram = codec.encode(next.hint());
            if (datagram != null && channel.send(ByteBuffer.wrap(datagram), to) > 0) {
                sent.incrementAndGet();
            }
            else {
                dropped.incrementAndGet(); // too long for a datagram, or no room in the socket's buffer
            }
        }
        catch (IOException | RuntimeException ex) {
            dropped.incrementAndGet();
            if (!closed) {
                log.debug("Sending a wake-up hint to {} failed", next.address(), ex);
            }
        }
    }

    /**
     * Whether another instance may be at {@code address}. An entry's address is table data, which anyone who may
     * write the table chooses: never the any address, a multicast group or the broadcast address; loopback and
     * link-local (an agent listening there) only from an endpoint that is there itself.
     */
    private boolean mayReach(InetAddress address) {
        if (address == null || WakeUpAddress.neverSentTo(address)) {
            return false;
        }
        if (address.isLoopbackAddress()) {
            return onLoopback;
        }
        return !address.isLinkLocalAddress() || onLinkLocal;
    }

    /** The host of {@code host:port} if it is an IP address or {@code localhost} (no lookup), else {@code null}. */
    private static InetAddress literalHost(String address) {
        if (address.startsWith("localhost:")) {
            return InetAddress.getLoopbackAddress();
        }
        try {
            return isIpLiteral(address) ? socketAddress(address).getAddress() : null;
        }
        catch (RuntimeException notOne) {
            return null;
        }
    }

    /**
     * {@code host:port}, {@code [v6]:port}: resolved through the JVM's name cache, so an advertised name that moves
     * (a pod's DNS name) is followed.
     */
    static InetSocketAddress socketAddress(String address) {
        int colon = address.lastIndexOf(':');
        if (colon <= 0 || colon == address.length() - 1) {
            throw new IllegalArgumentException("Not host:port: " + address);
        }
        String host = address.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port = Integer.parseInt(address.substring(colon + 1));
        InetSocketAddress resolved = new InetSocketAddress(host, port);
        if (resolved.isUnresolved()) {
            throw new IllegalArgumentException("Cannot resolve " + host);
        }
        return resolved;
    }

    /** Stops both threads and releases the port; hints still queued are dropped. */
    @Override
    public void close() {
        closed = true;
        closeQuietly(channel);
        closeQuietly(readable); // wakes the receiver out of its select
        sender.interrupt();
        try {
            receiver.join(1000);
            sender.join(1000);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** Whether either thread still runs: after {@link #close()}, neither. */
    boolean isRunning() {
        return receiver.isAlive() || sender.isAlive();
    }

    private static void closeQuietly(java.io.Closeable closeable) {
        if (closeable == null) {
            return;
        }
        try {
            closeable.close();
        }
        catch (IOException ex) {
            log.debug("Closing the wake-up endpoint failed", ex);
        }
    }

    @Override
    public String toString() {
        return "HintEndpoint[" + advertised + "]";
    }
}
