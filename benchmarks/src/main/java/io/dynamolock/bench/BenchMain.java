package io.dynamolock.bench;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Runs the benchmark: every scenario for every competitor, against DynamoDB Local on 127.0.0.1 with a simulated
 * round trip, and writes {@code results.md} and {@code charts.png}.
 * <pre>
 * --quick              short runs, written to target/bench-quick unless --out says
 * --rtt=MS             the simulated round trip (default 5)
 * --out=DIR            where the report goes (default results)
 * --only=NAME,NAME     competitors by id (dynamolock, dynamolock-poll10, dynamolock-hints, dynamolock-hints-auth, aws, aws-tuned,
 *                      spring, retry) and/or
 *                      scenarios by name (e.g. renewal-capacity); default all of each kind not named
 * --scenarios=1,2      scenarios by number or name (default all; 6 is computed from 1, 2 and 5)
 * --renewal-locks=N    locks held in the renewal-capacity scenario (default 10000, 1000 with --quick)
 * --renewal-lease=S    their lease in seconds (default 60, 6 with --quick); heartbeat a third of it
 * </pre>
 */
public final class BenchMain {

    private static final long STARTED = System.nanoTime();

    private BenchMain() {
    }

    /** What a run measures: competitors in the order given, and scenarios. */
    record Selection(List<CompetitorKind> kinds, Set<Scenario> scenarios) {

        /**
         * @param only      {@code --only}: competitor ids and scenario names, or null
         * @param scenarios {@code --scenarios}: scenario numbers and names, or null
         * @throws IllegalArgumentException naming the value that is neither, and the valid ones
         */
        static Selection parse(String only, String scenarios) {
            Set<CompetitorKind> kinds = new LinkedHashSet<>();
            Set<Scenario> chosen = EnumSet.noneOf(Scenario.class);
            for (String name : names(only)) {
                Optional<CompetitorKind> kind = CompetitorKind.byId(name);
                if (kind.isPresent()) {
                    kinds.add(kind.get());
                }
                else {
                    chosen.add(Scenario.byName(name).orElseThrow(() -> new IllegalArgumentException("--only=" + only
                            + ": '" + name + "' is neither a competitor (" + allIds() + ") nor a scenario ("
                            + Scenario.describeAll() + ")")));
                }
            }
            for (String name : names(scenarios)) {
                chosen.add(Scenario.byName(name).orElseThrow(() -> new IllegalArgumentException("--scenarios="
                        + scenarios + ": no scenario '" + name + "'; use numbers or names of " + Scenario.describeAll())));
            }
            return new Selection(kinds.isEmpty() ? List.of(CompetitorKind.values()) : List.copyOf(kinds),
                    chosen.isEmpty() ? EnumSet.allOf(Scenario.class) : chosen);
        }

        boolean runs(Scenario scenario) {
            return scenarios.contains(scenario);
        }

        private static List<String> names(String list) {
            return list == null ? List.of() : Arrays.stream(list.split(",")).map(String::trim)
                    .filter(name -> !name.isEmpty()).toList();
        }
    }

    public static void main(String[] args) throws Exception {
        configureLogging();
        System.setProperty("java.awt.headless", "true");
        boolean quick = has(args, "--quick");
        Env.Options options;
        Selection selection;
        try {
            RenewalCapacityScenario.Settings renewal = RenewalCapacityScenario.Settings.scenarioDefaults(quick);
            renewal = RenewalCapacityScenario.Settings.scenario(
                    atLeast(args, "--renewal-locks", 1, renewal.locks()),
                    Duration.ofSeconds(atLeast(args, "--renewal-lease", 1, (int) renewal.lease().toSeconds())));
            options = new Env.Options(quick, Duration.ofMillis(atLeast(args, "--rtt", 0, 5)),
                    Path.of(value(args, "--out", quick ? "target/bench-quick" : "results")), renewal);
            selection = Selection.parse(value(args, "--only", null), value(args, "--scenarios", null));
        }
        catch (IllegalArgumentException ex) {
            System.err.println(ex.getMessage());
            System.exit(2);
            return;
        }
        List<CompetitorKind> kinds = selection.kinds();

        int status = 0;
        try (Env env = new Env(options)) {
            progress("DynamoDB Local on " + env.endpoint + ", worker JVM started");
            // Renewal capacity measures dynamolock alone, with a table of its own.
            if (selection.scenarios().stream().anyMatch(s -> s != Scenario.RENEWAL_CAPACITY)) {
                kinds.forEach(kind -> kind.createTable(env.clients));
                Warmup.run(env, kinds);
            }
            List<UncontendedScenario.Row> uncontended = selection.runs(Scenario.UNCONTENDED)
                    ? UncontendedScenario.run(env, kinds) : List.of();
            ContendedScenario.Result contended = selection.runs(Scenario.CONTENDED) || selection.runs(Scenario.HANDOFF)
                    ? ContendedScenario.run(env, kinds) : new ContendedScenario.Result(List.of(), List.of());
            List<ManyEntitiesScenario.Row> many = selection.runs(Scenario.MANY_ENTITIES)
                    ? ManyEntitiesScenario.run(env, kinds) : List.of();
            List<WaitingCostScenario.Row> waiting = selection.runs(Scenario.WAITING_COST)
                    ? WaitingCostScenario.run(env, kinds) : List.of();
            List<ContendedScenario.Row> processes = selection.runs(Scenario.PROCESSES)
                    ? ProcessesScenario.run(env, kinds) : List.of();
            Optional<RenewalCapacityScenario.Result> renewal = selection.runs(Scenario.RENEWAL_CAPACITY)
                    ? Optional.of(RenewalCapacityScenario.run(env)) : Optional.empty();
            Report.Results results = new Report.Results(header(quick, options.roundTrip()), uncontended, contended,
                    many, waiting, processes, renewal);
            Report.write(options.out(), kinds, results);
            System.out.print(Report.headline(kinds, results));
            progress("wrote " + options.out().resolve("results.md") + " and " + options.out().resolve("charts.png"));
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
     * and Spring use, would otherwise pick DynamoDB Local's Log4j.
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
        return "# dynamolock benchmark results" + (quick ? " (--quick: short runs, not figures to quote)" : "") + "\n\n"
                + "- run: " + Instant.now().truncatedTo(ChronoUnit.SECONDS) + ", " + (quick ? "--quick" : "full")
                + ", " + String.format("%.0f", (System.nanoTime() - STARTED) / 1e9) + " s\n"
                + "- machine: " + runtime.availableProcessors() + " cores, " + memory / (1L << 30) + " GiB, "
                + System.getProperty("os.name") + " " + System.getProperty("os.arch") + ", Java "
                + System.getProperty("java.runtime.version") + " (" + System.getProperty("java.vm.name") + ")\n"
                + "- DynamoDB Local 2.6.1 in-memory on 127.0.0.1, one server for every JVM; simulated round trip "
                + roundTrip.toMillis() + " ms per request (half before sending, half after the answer)\n"
                + "- competitors: " + Arrays.stream(CompetitorKind.values()).map(k -> k.id + " = " + k.label)
                        .collect(Collectors.joining("; ")) + "\n";
    }

    private static String allIds() {
        return Arrays.stream(CompetitorKind.values()).map(k -> k.id).collect(Collectors.joining(", "));
    }

    private static boolean has(String[] args, String flag) {
        return Arrays.asList(args).contains(flag);
    }

    /** The whole number of at least {@code min} given as {@code name=N}, or {@code fallback}. */
    private static int atLeast(String[] args, String name, int min, int fallback) {
        String text = value(args, name, Integer.toString(fallback));
        try {
            int value = Integer.parseInt(text);
            if (value >= min) {
                return value;
            }
        }
        catch (NumberFormatException ex) {
            // Reported below, with the fix.
        }
        throw new IllegalArgumentException(name + "=" + text + " is not a whole number of at least " + min + "; e.g. "
                + name + "=" + fallback);
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
