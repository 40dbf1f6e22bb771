package io.dynamolock.samples.orders;

import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import java.io.IOException;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.util.HashMap;
import java.util.Map;
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
 */
public class EmbeddedDynamoDb implements ApplicationListener<ApplicationEvent> {

    static final String ENDPOINT = "dynamolock.dynamodb.endpoint";

    static final String REGION = "dynamolock.dynamodb.region";

    /** A client for DynamoDB Local: it takes any region, and any key id of letters and digits. */
    private static final Map<String, Object> LOCAL_CLIENT = Map.of(
            REGION, "us-east-1",
            "dynamolock.dynamodb.access-key-id", "local",
            "dynamolock.dynamodb.secret-access-key", "local");

    private static final Logger log = LoggerFactory.getLogger(EmbeddedDynamoDb.class);

    private DynamoDBProxyServer server;

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
        if (configured != null) {
            if (isLoopback(configured)) {
                // DynamoDB Local or LocalStack on this machine (e.g. another copy's server): any region and
                // key will do, so a second copy needs nothing but the endpoint. Explicit settings win.
                environment.getPropertySources().addLast(new MapPropertySource("localDynamoDbDefaults", LOCAL_CLIENT));
            }
            return;
        }
        // A region alone means AWS: the server's settings, added first, would override it, and the app would run
        // on DynamoDB Local while its user believes it runs in that region. Blank is unset, as for the starter.
        String region = environment.getProperty(REGION);
        if (region != null && !region.isBlank()) {
            log.info("{}={} is set: using DynamoDB in that region, not starting DynamoDB Local", REGION, region);
            return;
        }
        if (!environment.getProperty("sample.embedded-dynamodb.enabled", Boolean.class, true)) {
            return;
        }
        int port = portOrFree(environment.getProperty("sample.embedded-dynamodb.port", Integer.class, 8000));
        try {
            // Telemetry off: it would try to reach AWS and keep retrying where it cannot.
            server = ServerRunner.createServerFromCommandLineArgs(
                    new String[] {"-inMemory", "-port", Integer.toString(port), "-disableTelemetry"});
            listenOnLoopbackOnly(server);
            server.start();
        }
        catch (Exception ex) {
            throw new IllegalStateException("Could not start DynamoDB Local on port " + port
                    + "; set --sample.embedded-dynamodb.port or --" + ENDPOINT, ex);
        }
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
    private static void listenOnLoopbackOnly(DynamoDBProxyServer proxy) throws ReflectiveOperationException {
        Field jetty = DynamoDBProxyServer.class.getDeclaredField("server");
        jetty.setAccessible(true);
        for (Connector connector : ((Server) jetty.get(proxy)).getConnectors()) {
            ((ServerConnector) connector).setHost("127.0.0.1"); // the endpoint the app is given
        }
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

    private static int portOrFree(int preferred) {
        try (ServerSocket socket = new ServerSocket(preferred, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
        catch (IOException taken) {
            try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                return socket.getLocalPort();
            }
            catch (IOException ex) {
                throw new IllegalStateException("No free port for DynamoDB Local", ex);
            }
        }
    }
}
