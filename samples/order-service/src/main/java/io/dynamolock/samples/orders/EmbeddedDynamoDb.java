package io.dynamolock.samples.orders;

import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.AbstractLocalDynamoDBServerHandler;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import com.amazonaws.services.dynamodbv2.local.server.LocalDynamoDBRequestHandler;
import com.amazonaws.services.dynamodbv2.local.shared.access.AmazonDynamoDBLocal;
import java.io.IOException;
import java.lang.reflect.Field;
import java.net.BindException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.util.HashMap;
import java.util.Map;
import java.util.function.IntConsumer;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.event.ApplicationEnvironmentPreparedEvent;
import org.springframework.beans.factory.support.DefaultSingletonBeanRegistry;
import org.springframework.boot.context.event.ApplicationFailedEvent;
import org.springframework.boot.context.event.ApplicationPreparedEvent;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Starts DynamoDB Local as a server on 127.0.0.1 when neither {@code dynamolock.dynamodb.endpoint} nor
 * {@code dynamolock.dynamodb.region} is configured (and {@code sample.embedded-dynamodb.enabled} is not false),
 * before the application context exists, and points dynamolock at it; stops it when the context closes, after
 * every bean. A server rather than the embedded client, so that a second copy of the app can share it. Registered
 * in {@code META-INF/spring.factories}.
 * <p>
 * Its port: {@code sample.embedded-dynamodb.port} where set, else 8000, else (8000 taken) a free one. A port the
 * user set that is taken fails the start, naming it: the user's other tools point at it. Any other port that another
 * program takes between its check and the server's bind (a second copy started at the same moment) is replaced by
 * another free port, a few times; {@code 0} asks for any free port.
 */
public class EmbeddedDynamoDb implements ApplicationListener<ApplicationEvent> {

    static final String ENDPOINT = "dynamolock.dynamodb.endpoint";

    static final String REGION = "dynamolock.dynamodb.region";

    static final String PORT = "sample.embedded-dynamodb.port";

    /** DynamoDB Local's own default, where the README's commands for a second copy point. */
    private static final int DEFAULT_PORT = 8000;

    /** Ports tried, where the user chose none, before the start fails; each is lost only to a program binding it. */
    private static final int START_ATTEMPTS = 5;

    /** A client for DynamoDB Local: it takes any region, and any key id of letters and digits. */
    private static final Map<String, Object> LOCAL_CLIENT = Map.of(
            REGION, "us-east-1",
            "dynamolock.dynamodb.access-key-id", "local",
            "dynamolock.dynamodb.secret-access-key", "local");

    private static final Logger log = LoggerFactory.getLogger(EmbeddedDynamoDb.class);

    private final IntConsumer beforeStart;

    private Running server;

    public EmbeddedDynamoDb() {
        this(port -> { });
    }

    /** For tests: {@code beforeStart} runs with each port just before DynamoDB Local binds it. */
    EmbeddedDynamoDb(IntConsumer beforeStart) {
        this.beforeStart = beforeStart;
    }

    @Override
    public void onApplicationEvent(ApplicationEvent event) {
        if (event instanceof ApplicationEnvironmentPreparedEvent prepared) {
            startUnlessConfigured(prepared.getEnvironment());
        }
        else if (event instanceof ApplicationPreparedEvent prepared && server != null) {
            // Registered before any bean, so destroyed after all of them: the web server drains its
            // requests before the database they use goes away.
            ((DefaultSingletonBeanRegistry) prepared.getApplicationContext().getBeanFactory())
                    .registerDisposableBean("embeddedDynamoDb", this::stop);
        }
        else if (event instanceof ApplicationFailedEvent) {
            stop();
        }
    }

    private void startUnlessConfigured(ConfigurableEnvironment environment) {
        String configured = environment.getProperty(ENDPOINT);
        if (configured != null && !configured.isBlank()) {
            if (isLoopback(configured)) {
                // DynamoDB Local or LocalStack on this machine (e.g. another copy's server): any region and
                // key will do, so a second copy needs nothing but the endpoint. Explicit settings win.
                environment.getPropertySources().addLast(new MapPropertySource("localDynamoDbDefaults", LOCAL_CLIENT));
            }
            return;
        }
        // A region alone means AWS: the server's settings, added first, would override it, and the app would run
        // on DynamoDB Local while its user believes it runs in that region. Blank is unset, as for the starter
        // (and as for the endpoint above).
        String region = environment.getProperty(REGION);
        if (region != null && !region.isBlank()) {
            log.info("{}={} is set: using DynamoDB in that region, not starting DynamoDB Local", REGION, region);
            return;
        }
        if (!environment.getProperty("sample.embedded-dynamodb.enabled", Boolean.class, true)) {
            return;
        }
        int port = start(environment.getProperty(PORT, Integer.class));
        String endpoint = "http://127.0.0.1:" + port;
        Map<String, Object> properties = new HashMap<>(LOCAL_CLIENT);
        properties.put(ENDPOINT, endpoint);
        environment.getPropertySources().addFirst(new MapPropertySource("embeddedDynamoDb", properties));
        log.info("Started DynamoDB Local (in memory) at {}. A second copy of this app can share it:"
                + " --{}={} --server.port=8081", endpoint, ENDPOINT, endpoint);
    }

    /**
     * DynamoDB Local's command line has no bind address, and its Jetty server listens on every interface: anyone on
     * the network could read the orders and break or forge entries of the lock table, as it takes any credentials.
     * Its server is not started yet, so its connectors can still be bound to 127.0.0.1 (a private field of
     * DynamoDB Local 2.x; if a later version renames it, the start fails here rather than run exposed).
     */
    private static Server listenOnLoopbackOnly(DynamoDBProxyServer proxy) throws ReflectiveOperationException {
        Server jetty = (Server) read(DynamoDBProxyServer.class, "server", proxy);
        for (Connector connector : jetty.getConnectors()) {
            ((ServerConnector) connector).setHost("127.0.0.1"); // the endpoint the app is given
        }
        return jetty;
    }

    /**
     * The databases DynamoDB Local creates as requests come (one per access key and region), live. Each runs its
     * background jobs on a pool of non-daemon threads ("pool-N-thread-M"), among them the stream shard rollover
     * scheduler, which sleeps in a loop that the pool's {@code shutdown()}, all the server's {@code stop()} calls,
     * does not end: the JVM would not exit after a failed start. {@code shutdownNow()} interrupts it. Private fields
     * of DynamoDB Local 2.x, read at start so that a later version renaming them fails the start, not the exit.
     */
    @SuppressWarnings("unchecked")
    private static Map<String, AmazonDynamoDBLocal> databases(DynamoDBProxyServer proxy)
            throws ReflectiveOperationException {
        Object serverHandler = read(DynamoDBProxyServer.class, "serverHandler", proxy);
        Object requestHandler = read(AbstractLocalDynamoDBServerHandler.class, "primaryHandler", serverHandler);
        return (Map<String, AmazonDynamoDBLocal>) read(LocalDynamoDBRequestHandler.class, "dbRequestHandlers",
                requestHandler);
    }

    private static Object read(Class<?> type, String field, Object target) throws ReflectiveOperationException {
        Field declared = type.getDeclaredField(field);
        declared.setAccessible(true);
        return declared.get(target);
    }

    private static boolean isLoopback(String endpoint) {
        String host = URI.create(endpoint).getHost();
        return "localhost".equals(host) || (host != null && host.startsWith("127."));
    }

    private synchronized void stop() {
        if (server != null) {
            try {
                server.stop();
                log.info("Stopped DynamoDB Local");
            }
            catch (Exception ex) {
                log.warn("Could not stop DynamoDB Local", ex);
            }
            server = null;
        }
    }

    /**
     * Starts the server on the port the user chose, or on 8000, or on a free port if 8000 is taken. A port is
     * checked by binding and releasing it, so another program (a second copy started at the same moment) can take
     * it before the server binds it: a port the user did not choose is then replaced by another free one, a few
     * times. A port the user chose is not: it is the port the user's other tools point at.
     */
    private int start(Integer chosen) {
        if (chosen != null && (chosen < 0 || chosen > 65_535)) {
            throw new IllegalStateException(PORT + "=" + chosen + " is no port: set one from 1 to 65535, or 0 for"
                    + " any free one");
        }
        boolean fixed = chosen != null && chosen != 0;
        int port = fixed ? chosen : (chosen == null && isFree(DEFAULT_PORT)) ? DEFAULT_PORT : freePort();
        for (int attempt = 1; ; attempt++) {
            try {
                if (fixed && !isFree(port)) {
                    throw new BindException("Address already in use");
                }
                server = startOn(port);
                return port;
            }
            catch (Exception ex) {
                if (!isPortTaken(ex)) {
                    throw new IllegalStateException("Could not start DynamoDB Local on port " + port + "; set --"
                            + PORT + " or --" + ENDPOINT, ex);
                }
                if (fixed) {
                    throw new IllegalStateException("DynamoDB Local cannot listen on port " + port + ", set by "
                            + PORT + ": the port is taken. Set another port (0 for any free one), leave it unset"
                            + " (8000, or a free port when 8000 is taken), or point the app at the server on that"
                            + " port with --" + ENDPOINT + "=http://127.0.0.1:" + port, ex);
                }
                if (attempt == START_ATTEMPTS) {
                    throw new IllegalStateException("DynamoDB Local found no free port: " + START_ATTEMPTS
                            + " ports in a row were taken before it could listen on them, the last " + port
                            + "; set --" + PORT + " or --" + ENDPOINT, ex);
                }
                int next = freePort();
                log.info("Port {} was taken before DynamoDB Local could listen on it; trying port {}", port, next);
                port = next;
            }
        }
    }

    /** A server listening on {@code port}; a server whose start failed is stopped, as its threads are no daemons. */
    private Running startOn(int port) throws Exception {
        // Telemetry off: it would try to reach AWS and keep retrying where it cannot.
        DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(
                new String[] {"-inMemory", "-port", Integer.toString(port), "-disableTelemetry"});
        try {
            Server jetty = listenOnLoopbackOnly(proxy);
            Map<String, AmazonDynamoDBLocal> databases = databases(proxy);
            beforeStart.accept(port);
            proxy.start();
            if (!jetty.isStarted()) {
                // DynamoDBProxyServer.start() prints a SocketException (a BindException is one) and returns.
                throw new BindException("DynamoDB Local did not start on port " + port);
            }
            return new Running(proxy, databases);
        }
        catch (Exception ex) {
            stopQuietly(proxy, ex);
            throw ex;
        }
    }

    private static void stopQuietly(DynamoDBProxyServer proxy, Exception failure) {
        try {
            proxy.stop();
        }
        catch (Exception ex) {
            failure.addSuppressed(ex);
        }
    }

    private static boolean isPortTaken(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof BindException) {
                return true;
            }
        }
        return false;
    }

    private static boolean isFree(int port) {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return true;
        }
        catch (IOException taken) {
            return false;
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
        catch (IOException ex) {
            throw new IllegalStateException("No free port for DynamoDB Local", ex);
        }
    }

    /** A started server and the databases it has created so far. */
    private record Running(DynamoDBProxyServer proxy, Map<String, AmazonDynamoDBLocal> databases) {

        /** Stops the server, then its databases' background jobs, which its own stop leaves running. */
        void stop() throws Exception {
            try {
                proxy.stop();
            }
            finally {
                databases.values().forEach(AmazonDynamoDBLocal::shutdownNow);
            }
        }
    }
}
