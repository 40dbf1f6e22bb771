package io.dynamolock.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Renewal capacity (issue 10, R12), the one implementation behind scenario 8 of {@link BenchMain} and
 * {@link RenewalCapacityMain}: one JVM, one {@link io.dynamolock.core.LockTemplate} (defaults but the lease and
 * heartbeat), takes {@code locks} locks and holds them while every renewal takes {@code renewalRoundTrip} from send
 * to answer (see {@link SlowRenewals}); nobody else wants the locks, so a lock lost here is lost only because the
 * template could not renew it in time. Runs in a JVM of its own ({@link RenewalCapacityWorker}), so that its threads
 * and heap are the template's, not DynamoDB Local's or the other scenarios'.
 */
final class RenewalCapacityScenario {

    static final String TABLE = "bench-renewal";

    /**
     * @param locks            how many locks the template holds
     * @param lease            their lease
     * @param heartbeat        the template's heartbeat
     * @param renewalRoundTrip how long a renewal takes from send to answer (other requests: the simulated round trip)
     * @param hold             how long the locks are held after the last acquire
     */
    record Settings(int locks, Duration lease, Duration heartbeat, Duration renewalRoundTrip, Duration hold) {

        /**
         * Scenario 8: 1,000 locks with a 6 s lease in --quick, 10,000 with a 60 s lease in the full run, heartbeat a
         * third of the lease, renewals 200 ms, held for two leases: both ask for 500 renewals/s, about half of what
         * DynamoDB Local serves on this 2-core machine (about 900 UpdateItems/s with nothing else running), so that
         * the server is not what limits a template that renews on time.
         */
        static Settings scenario(int locks, Duration lease) {
            return new Settings(locks, lease, lease.dividedBy(3), Duration.ofMillis(200), lease.multipliedBy(2));
        }

        static Settings scenarioDefaults(boolean quick) {
            return quick ? scenario(1_000, Duration.ofSeconds(6)) : scenario(10_000, Duration.ofSeconds(60));
        }

        /** The renewals per second that keep every lock: one per lock per heartbeat. */
        double renewalsNeededPerSecond() {
            return locks / (heartbeat.toMillis() / 1000.0);
        }
    }

    /**
     * What the worker measured.
     *
     * @param enqueues              requests of step ENQUEUE: must equal {@code acquired}
     * @param lostCallbacks         {@code LockHandle.onLost} callbacks run
     * @param lostListener          {@code LockListener.onLost} calls
     * @param invalid               handles whose {@code isValid()} was false at the end
     * @param threadsBefore         live threads of the JVM before the template was built
     * @param peakThreads           the most live threads while the locks were held
     * @param peakDynamolockThreads the most live threads named {@code dynamolock*} (sampled every 100 ms)
     * @param peakRequestThreads    the most live threads named {@code dynamolock-request-*} (the same samples)
     * @param heapBeforeBytes       heap used after GC before the first acquire (after a warm-up)
     * @param heapHeldBytes         heap used after GC with every lock held
     * @param renewals              renewals sent while the locks were held, over {@code windowSeconds}
     * @param delayedRenewals       renewal attempts delayed by {@link SlowRenewals} in the whole run
     */
    record Result(Settings settings, long acquired, long acquireFailures, double acquireSeconds, long enqueues,
            long lostCallbacks, long lostListener, long invalid, long threadsBefore, long peakThreads,
            long peakDynamolockThreads, long peakRequestThreads, long heapBeforeBytes, long heapHeldBytes,
            long renewals, long delayedRenewals, double windowSeconds, long connections) {

        double renewalsPerSecond() {
            return windowSeconds == 0 ? 0 : renewals / windowSeconds;
        }

        double heapPerThousandBytes() {
            return (heapHeldBytes - heapBeforeBytes) * 1000.0 / settings.locks();
        }

        /** Why these figures do not measure what they claim to; empty if they do. Lost locks are a figure, not one. */
        List<String> problems() {
            List<String> problems = new ArrayList<>();
            if (delayedRenewals == 0) {
                problems.add("no renewal was delayed, so the fault was never injected");
            }
            if (acquired != settings.locks()) {
                problems.add("took " + acquired + " of " + settings.locks() + " locks");
            }
            if (enqueues != acquired) {
                problems.add(enqueues + " enqueues for " + acquired + " locks taken");
            }
            return problems;
        }
    }

    private RenewalCapacityScenario() {
    }

    static Result run(Env env) throws Exception {
        return measure(env.endpoint, env.options.roundTrip(), env.options.renewal());
    }

    /** Measures {@code settings} against the DynamoDB Local at {@code endpoint}, in a JVM of its own. */
    static Result measure(URI endpoint, Duration roundTrip, Settings settings) throws Exception {
        try (DynamoDbClient client = Clients.sync(endpoint, 4)) {
            DynamoLockCompetitor.createTable(client, TABLE);
        }
        BenchMain.progress("renewal capacity: " + settings.locks() + " locks, lease " + settings.lease().toSeconds()
                + " s, heartbeat " + settings.heartbeat().toMillis() + " ms, every renewal answered after "
                + settings.renewalRoundTrip().toMillis() + " ms");
        Process worker = RemoteJvm.start(RenewalCapacityWorker.class, endpoint.toString(), TABLE,
                Long.toString(roundTrip.toMillis()), Integer.toString(settings.locks()),
                Long.toString(settings.lease().toMillis()), Long.toString(settings.heartbeat().toMillis()),
                Long.toString(settings.renewalRoundTrip().toMillis()), Long.toString(settings.hold().toMillis()));
        Map<String, String> results = new HashMap<>();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(worker.getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line = out.readLine(); !"DONE".equals(line); line = out.readLine()) {
                if (line == null) {
                    throw new IOException("The renewal-capacity JVM ended unexpectedly; see its stderr above");
                }
                String[] parts = line.split(" ", 3);
                if (parts[0].equals("RESULT") && parts.length == 3) {
                    results.put(parts[1], parts[2]);
                }
                else if (parts[0].equals("PROGRESS")) {
                    BenchMain.progress("renewal capacity: " + line.substring(9));
                }
            }
        }
        finally {
            if (!worker.waitFor(30, TimeUnit.SECONDS)) {
                worker.destroy();
            }
        }
        Result result = new Result(settings, count(results, "acquired"), count(results, "acquireFailures"),
                number(results, "acquireSeconds"), count(results, "enqueues"), count(results, "lostCallbacks"),
                count(results, "lostListener"), count(results, "invalid"), count(results, "threadsBefore"),
                count(results, "peakThreads"), count(results, "peakDynamolockThreads"),
                count(results, "peakRequestThreads"), count(results, "heapBeforeBytes"),
                count(results, "heapHeldBytes"), count(results, "renewals"), count(results, "delayedRenewals"),
                number(results, "windowSeconds"), count(results, "connections"));
        BenchMain.progress("renewal capacity: " + result.lostCallbacks() + " of " + settings.locks() + " locks lost, "
                + result.delayedRenewals() + " renewals delayed, " + Report.f0(result.renewalsPerSecond())
                + " renewals/s sent" + (result.problems().isEmpty() ? "" : "; INVALID: " + result.problems()));
        return result;
    }

    private static long count(Map<String, String> results, String name) {
        return Long.parseLong(required(results, name));
    }

    private static double number(Map<String, String> results, String name) {
        return Double.parseDouble(required(results, name));
    }

    private static String required(Map<String, String> results, String name) {
        String value = results.get(name);
        if (value == null) {
            throw new IllegalStateException("The renewal-capacity JVM did not report '" + name + "': " + results);
        }
        return value;
    }
}
