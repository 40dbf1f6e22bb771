package io.dynamolock.bench;

import java.time.Duration;

/**
 * Renewal capacity (R12) alone, with settings of one's own: the measurement of scenario 8
 * ({@link RenewalCapacityScenario}) against a DynamoDB Local of its own, printed as section 8 of the report. Exits
 * with 1 if the run is invalid (no renewal was delayed, or not every lock was taken), 2 on bad arguments.
 * <pre>
 * java -cp ... io.dynamolock.bench.RenewalCapacityMain [locks=10000] [renewalMs=200] [leaseS=60] [holdS=150]
 * </pre>
 * The heartbeat is half the lease (the template's default ratio); other requests take the simulated 5 ms round trip.
 */
public final class RenewalCapacityMain {

    private static final Duration ROUND_TRIP = Duration.ofMillis(5);

    private RenewalCapacityMain() {
    }

    public static void main(String[] args) throws Exception {
        BenchMain.configureLogging();
        RenewalCapacityScenario.Settings settings;
        try {
            settings = settings(args);
        }
        catch (IllegalArgumentException ex) {
            System.err.println(ex.getMessage());
            System.exit(2);
            return;
        }
        RenewalCapacityScenario.Result result;
        try (LocalDynamoDb server = LocalDynamoDb.start()) {
            result = RenewalCapacityScenario.measure(server.endpoint(), ROUND_TRIP, settings);
        }
        StringBuilder md = new StringBuilder();
        Report.renewalCapacity(md, result);
        System.out.print(md);
        // DynamoDB Local leaves a non-daemon thread running once it served a request.
        System.exit(result.problems().isEmpty() ? 0 : 1);
    }

    /**
     * {@code locks renewalMs leaseS holdS}, each optional from the right (10000 200 60 150); heartbeat half the lease.
     *
     * @throws IllegalArgumentException naming the argument that is not a positive whole number
     */
    static RenewalCapacityScenario.Settings settings(String... args) {
        Duration lease = Duration.ofSeconds(positive(args, 2, "leaseS", 60));
        return new RenewalCapacityScenario.Settings(positive(args, 0, "locks", 10_000), lease, lease.dividedBy(2),
                Duration.ofMillis(positive(args, 1, "renewalMs", 200)), Duration.ofSeconds(positive(args, 3, "holdS", 150)));
    }

    private static int positive(String[] args, int index, String name, int fallback) {
        if (args.length <= index) {
            return fallback;
        }
        try {
            int value = Integer.parseInt(args[index]);
            if (value > 0) {
                return value;
            }
        }
        catch (NumberFormatException ex) {
            // Reported below.
        }
        throw new IllegalArgumentException("argument " + (index + 1) + " (" + name + ") = '" + args[index]
                + "' is not a positive whole number; arguments: locks renewalMs leaseS holdS, e.g. 10000 200 60 150");
    }
}
