package io.dynamolock.bench;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Runs the benchmark: every scenario for every competitor, against DynamoDB Local on 127.0.0.1 with a simulated
 * round trip, and writes {@code results.md} and {@code charts.png}.
 * <pre>
 * --quick           short runs (under 2 minutes in all), written to target/bench-quick unless --out says
 * --rtt=MS          the simulated round trip (default 5)
 * --out=DIR         where the report goes (default results)
 * --only=ID,ID      competitors by id: dynamolock, dynamolock-poll10, aws, aws-tuned, retry (default all)
 * --scenarios=1,2   which scenarios to run (default all; 6 is computed from 1, 2 and 5)
 * </pre>
 */
public final class BenchMain {

    private static final long STARTED = System.nanoTime();

    private BenchMain() {
    }

    public static void main(String[] args) throws Exception {
        configureLogging();
        System.setProperty("java.awt.headless", "true");
        boolean quick = has(args, "--quick");
        Duration roundTrip = Duration.ofMillis(Long.parseLong(value(args, "--rtt", "5")));
        Path out = Path.of(value(args, "--out", quick ? "target/bench-quick" : "results"));
        List<CompetitorKind> kinds = Arrays.stream(value(args, "--only", allIds()).split(","))
                .map(CompetitorKind::byId).toList();
        Set<String> scenarios = Set.of(value(args, "--scenarios", "1,2,3,4,5,6").split(","));

        int status = 0;
        try (Env env = new Env(new Env.Options(quick, roundTrip, out))) {
            kinds.forEach(kind -> kind.createTable(env.client));
            progress("DynamoDB Local on " + env.endpoint + ", worker JVM started");
            Warmup.run(env, kinds);
            List<UncontendedScenario.Row> uncontended = scenarios.contains("1")
                    ? UncontendedScenario.run(env, kinds) : List.of();
            ContendedScenario.Result contended = scenarios.contains("2") || scenarios.contains("3")
                    ? ContendedScenario.run(env, kinds) : new ContendedScenario.Result(List.of(), List.of());
            List<ManyEntitiesScenario.Row> many = scenarios.contains("4")
                    ? ManyEntitiesScenario.run(env, kinds) : List.of();
            List<WaitingCostScenario.Row> waiting = scenarios.contains("5")
                    ? WaitingCostScenario.run(env, kinds) : List.of();
            Report.write(out, kinds, new Report.Results(header(quick, roundTrip), uncontended, contended, many,
                    waiting));
            progress("wrote " + out.resolve("results.md") + " and " + out.resolve("charts.png"));
        }
        catch (Exception ex) {
            ex.printStackTrace();
            status = 1;
        }
        // DynamoDB Local leaves a non-daemon thread running once it served a request.
        System.exit(status);
    }

    /**
     * Every library logs through logback (logback.xml: stderr, WARN); commons-logging, which AWS's lock client
     * uses, would otherwise pick DynamoDB Local's Log4j.
     */
    static void configureLogging() {
        System.setProperty("org.apache.commons.logging.LogFactory", "org.apache.commons.logging.impl.Slf4jLogFactory");
    }

    static void progress(String message) {
        System.out.printf("[%5.1f s] %s%n", (System.nanoTime() - STARTED) / 1e9, message);
    }

    private static String header(boolean quick, Duration roundTrip) {
        Runtime runtime = Runtime.getRuntime();
        long memory = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getTotalMemorySize();
        return "# dynamolock benchmark results\n\n"
                + "- run: " + Instant.now().truncatedTo(ChronoUnit.SECONDS) + ", " + (quick ? "--quick" : "full")
                + ", " + String.format("%.0f", (System.nanoTime() - STARTED) / 1e9) + " s\n"
                + "- machine: " + runtime.availableProcessors() + " cores, " + memory / (1L << 30) + " GiB, "
                + System.getProperty("os.name") + " " + System.getProperty("os.arch") + ", Java "
                + System.getProperty("java.runtime.version") + " (" + System.getProperty("java.vm.name") + ")\n"
                + "- DynamoDB Local 2.6.1 in-memory on 127.0.0.1, one server for both JVMs; simulated round trip "
                + roundTrip.toMillis() + " ms per request (half before sending, half after the answer)\n"
                + "- competitors: " + Arrays.stream(CompetitorKind.values()).map(k -> k.id + " = " + k.label)
                        .collect(Collectors.joining("; ")) + "\n";
    }

    private static String allIds() {
        return Arrays.stream(CompetitorKind.values()).map(k -> k.id).collect(Collectors.joining(","));
    }

    private static boolean has(String[] args, String flag) {
        return Arrays.asList(args).contains(flag);
    }

    private static String value(String[] args, String name, String fallback) {
        List<String> matches = new ArrayList<>();
        for (String arg : args) {
            if (arg.startsWith(name + "=")) {
                matches.add(arg.substring(name.length() + 1));
            }
        }
        return matches.isEmpty() ? fallback : matches.get(matches.size() - 1);
    }
}
