package io.dynamolock.samples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockTemplate;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * What {@code mvn spring-boot:process-aot} (and a native build) does: runs the main method under a hook that
 * abandons the run (SpringApplication.AbandonedRunException) once the context is loaded, then writes the
 * generated sources. The main method must let that exception reach Boot, not exit the JVM. Then what a native
 * image runs, on the JVM: the generated code compiled and the app started with {@code -Dspring.aot.enabled=true},
 * serving a {@code @QueueLocked} call.
 */
class AotProcessingTests {

    /** Boot's line once the web server listens, with the port it chose. */
    private static final Pattern TOMCAT_STARTED = Pattern.compile("Tomcat started on port (\\d+) \\(");

    /** The sample's line once its DynamoDB Local listens, with its endpoint. */
    private static final Pattern DYNAMODB_STARTED = Pattern.compile("Started DynamoDB Local \\(in memory\\) at (\\S+?)\\. ");

    @TempDir
    static Path out;

    private static Process aot;

    private static String aotLog;

    @BeforeAll
    static void processAheadOfTime() throws Exception {
        aot = new ProcessBuilder(List.of(java(), "-Xmx256m",
                "-cp", System.getProperty("java.class.path"), "org.springframework.boot.SpringApplicationAotProcessor",
                OrderServiceApplication.class.getName(), out.resolve("sources").toString(),
                out.resolve("resources").toString(), out.resolve("classes").toString(), "io.dynamolock",
                "order-service", "--sample.embedded-dynamodb.enabled=false", "--sample.demo.enabled=false",
                "--dynamolock.dynamodb.region=eu-west-1"))
                .redirectErrorStream(true).redirectOutput(out.resolve("aot.txt").toFile()).start();
        try {
            aot.waitFor(120, TimeUnit.SECONDS);
        }
        finally {
            aot.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            aotLog = Files.readString(out.resolve("aot.txt"), StandardCharsets.UTF_8);
        }
    }

    @Test
    void aotProcessingOfTheMainMethodSucceeds() throws Exception {
        assertThat(aot.exitValue()).as("exit code; log:%n%s", tail(aotLog)).isZero();
        try (var files = Files.walk(out.resolve("sources"))) {
            assertThat(files.map(Path::toString)).anyMatch(f -> f.endsWith("__ApplicationContextInitializer.java"));
        }
    }

    /**
     * The hints dynamolock registers (its {@code aot.factories}) are in what a native build is given: SpEL reads
     * {@code #root.args} and the like by reflection, and Jackson writes the actuator endpoint's bodies so.
     */
    @Test
    void theGeneratedHintsCoverWhatDynamolockReachesByReflection() throws Exception {
        assertThat(aot.exitValue()).as("exit code of the AOT processing; log:%n%s", tail(aotLog)).isZero();
        Path metadata;
        try (var files = Files.walk(out.resolve("resources"))) {
            metadata = files.filter(f -> f.endsWith("reachability-metadata.json")).findFirst().orElseThrow();
        }
        Map<String, JsonNode> types = new HashMap<>();
        JsonMapper.shared().readTree(metadata.toFile()).get("reflection")
                .forEach(type -> types.put(type.get("type").asString(), type));
        Stream.of("getArgs", "getMethod", "getMethodName", "getTarget", "getTargetClass").forEach(getter ->
                assertInvokable(types, "io.dynamolock.annotation.LockExpressionRoot", getter));
        assertInvokable(types, "io.dynamolock.autoconfigure.DynamoLockEndpoint$QueueDescriptor", "entries");
        assertInvokable(types, "io.dynamolock.autoconfigure.DynamoLockEndpoint$EntryDescriptor", "ticket");
        assertInvokable(types, "io.dynamolock.core.LockInfo", "entity");
    }

    private static void assertInvokable(Map<String, JsonNode> types, String type, String method) {
        JsonNode hint = types.get(type);
        assertThat(hint).as("%s registered for reflection", type).isNotNull();
        List<String> methods = new ArrayList<>();
        hint.path("methods").forEach(each -> methods.add(each.get("name").asString()));
        assertThat(hint.path("allPublicMethods").asBoolean(false) || methods.contains(method))
                .as("%s.%s invokable by reflection; the hint: %s", type, method, hint).isTrue();
    }

    /**
     * The app runs on the generated bean definitions, and {@code OrderService.addItem} is still locked: while the
     * test holds the order's lock, the call queues behind it (without the advisor its inner no-wait lock would
     * fail at once), and completes once the test releases it. DynamoDB Local is started by the app itself.
     */
    @Test
    void theGeneratedCodeServesALockedCallInAotMode() throws Exception {
        assertThat(aot.exitValue()).as("exit code of the AOT processing; log:%n%s", tail(aotLog)).isZero();
        Path compiled = compileGeneratedSources();
        String classPath = String.join(File.pathSeparator, compiled.toString(),
                out.resolve("resources").toString(), out.resolve("classes").toString(),
                System.getProperty("java.class.path"));
        Process app = new ProcessBuilder(List.of(java(), "-Xmx256m", "-Dspring.aot.enabled=true",
                "-cp", classPath, OrderServiceApplication.class.getName(),
                // Ports the app picks itself, read back from its log: one chosen here could be taken meanwhile.
                "--server.port=0", "--server.address=127.0.0.1", "--sample.demo.enabled=false",
                "--sample.embedded-dynamodb.port=0"))
                .redirectErrorStream(true).redirectOutput(out.resolve("app.txt").toFile()).start();
        Thread reaper = new Thread(app::destroyForcibly, "aot-app-reaper");
        Runtime.getRuntime().addShutdownHook(reaper);
        try {
            int port = Integer.parseInt(awaitLogged(app, TOMCAT_STARTED).group(1));
            awaitHealthy(app, port);
            assertThat(appLog()).as("Boot's start line in AOT mode").contains("Starting AOT-processed OrderServiceApplication");
            OrderApi api = new OrderApi(port);
            api.create("aot-order");
            try (DynamoDbClient client = localClient(URI.create(awaitLogged(app, DYNAMODB_STARTED).group(1)));
                    LockTemplate test = LockTemplate.builder(client).tableName("dynamolock").ownerName("aot-test")
                            .build()) {
                CompletableFuture<String> added;
                try (LockHandle held = test.acquire("aot-order", Duration.ofSeconds(10))) {
                    added = CompletableFuture.supplyAsync(() -> api.addItem("aot-order", "pen", 150));
                    awaitQueuedBehind(test, added, app);
                }
                assertThat(added.get(30, TimeUnit.SECONDS)).contains("\"pen\"");
            }
            assertThat(api.itemCount("aot-order")).isEqualTo(1);
        }
        finally {
            app.destroy();
            if (!app.waitFor(30, TimeUnit.SECONDS)) {
                app.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
            Runtime.getRuntime().removeShutdownHook(reaper);
        }
    }

    /** Compiles what the processor generated, as the Boot Maven plugin does before a native build. */
    private static Path compileGeneratedSources() throws IOException {
        Path compiled = Files.createDirectories(out.resolve("compiled"));
        List<String> arguments = new ArrayList<>(List.of("-proc:none", "-nowarn", "-d", compiled.toString(),
                "-cp", out.resolve("classes") + File.pathSeparator + System.getProperty("java.class.path")));
        try (var files = Files.walk(out.resolve("sources"))) {
            files.map(Path::toString).filter(f -> f.endsWith(".java")).forEach(arguments::add);
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        int result = javac.run(null, errors, errors, arguments.toArray(String[]::new));
        assertThat(result).as("javac of the generated sources:%n%s", errors.toString(StandardCharsets.UTF_8)).isZero();
        return compiled;
    }

    private static void awaitHealthy(Process app, int port) throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        HttpRequest health = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/health"))
                .timeout(Duration.ofSeconds(5)).build();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            assertThat(app.isAlive()).as("the app is running; its log:%n%s", appLog()).isTrue();
            try {
                if (http.send(health, HttpResponse.BodyHandlers.ofString()).statusCode() == 200) {
                    return;
                }
            }
            catch (IOException notYetListening) {
                // starting
            }
            Thread.sleep(200);
        }
        throw new AssertionError("not healthy within 60 s; its log:\n" + appLog());
    }

    /** Until the app's entry is in the order's queue behind the test's; the call must not have answered. */
    private static void awaitQueuedBehind(LockTemplate test, CompletableFuture<String> call, Process app)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            if (call.isDone()) {
                throw new AssertionError("addItem answered while the test held the order's lock, so @QueueLocked"
                        + " did not wait for it: " + call.handle((body, failure) -> body != null ? body : failure)
                        .get() + "\nthe app's log:\n" + appLog());
            }
            if (test.queue("aot-order", test.defaultNamespace()).entries().stream()
                    .anyMatch(entry -> !entry.owner().equals("aot-test"))) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("the app never queued for the order's lock; its log:\n" + appLog());
    }

    /** The first match of {@code line} in the app's log, waited for up to a minute while the app runs. */
    private static Matcher awaitLogged(Process app, Pattern line) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            Matcher logged = line.matcher(Files.readString(out.resolve("app.txt"), StandardCharsets.UTF_8));
            if (logged.find()) {
                return logged;
            }
            assertThat(app.isAlive()).as("the app is running; its log:%n%s", appLog()).isTrue();
            Thread.sleep(200);
        }
        throw new AssertionError("the app never logged " + line + " within 60 s; its log:\n" + appLog());
    }

    private static DynamoDbClient localClient(URI endpoint) {
        return DynamoDbClient.builder().endpointOverride(endpoint)
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")))
                .build();
    }

    private static String appLog() {
        try {
            return tail(Files.readString(out.resolve("app.txt"), StandardCharsets.UTF_8));
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private static String tail(String log) {
        return log.substring(Math.max(0, log.length() - 4000));
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
}
