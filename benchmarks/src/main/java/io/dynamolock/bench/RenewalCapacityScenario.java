package io.dynamolock.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Scenario 8, renewal capacity (issue 10, R12): one JVM, one {@link io.dynamolock.core.LockTemplate} (defaults but
 * the lease), takes {@code locks} locks and holds them for two leases while every renewal takes 200 ms to answer
 * (see {@link SlowRenewals}); nobody else wants the locks, so a lock lost here is lost only because the template
 * could not renew it in time. Runs in a JVM of its own ({@link RenewalCapacityWorker}), so that its threads and
 * heap are the template's, not DynamoDB Local's or the other scenarios'.
 */
final class RenewalCapacityScenario {

    /** How long a renewal takes from send to answer (other requests: the simulated round trip). */
    static final Duration RENEWAL_ROUND_TRIP = Duration.ofMillis(200);

    static final String TABLE = "bench-renewal";

    /**
     * @param locks how many locks the template holds
     * @param lease their lease; the heartbeat is a third of it, and they are held for two leases
     */
    record Settings(int locks, Duration lease) {

        /**
         * 1,000 locks with a 6 s lease in --quick, 10,000 with a 60 s lease in the full run: both ask for 500
         * renewals/s, about half of what DynamoDB Local serves on this 2-core machine (about 900 UpdateItems/s with
         * nothing else running), so that the server is not what limits a template that renews on time.
         */
        static Settings defaults(boolean quick) {
            return quick ? new Settings(1_000, Duration.ofSeconds(6)) : new Settings(10_000, Duration.ofSeconds(60));
        }

        Duration heartbeat() {
            return lease.dividedBy(3);
        }

        Duration hold() {
            return lease.multipliedBy(2);
        }

        /** The renewals per second that keep every lock: one per lock per heartbeat. */
        double renewalsNeededPerSecond() {
            return locks / (heartbeat().toMillis() / 1000.0);
        }
    }

    /**
     * What the worker measured.
     *
     * @param lostCallbacks         {@code LockHandle.onLost} callbacks run
     * @param lostListener          {@code LockListener.onLost} calls
     * @param invalid               handles whose {@code isValid()} was false at the end
     * @param enqueues              UpdateItems classified as enqueues: must equal {@code acquired}
     * @param threadsBefore         live threads of the JVM before the template was built
     * @param peakThreads           the most live threads while the locks were held
     * @param peakDynamolockThreads the most live threads named {@code dynamolock*} (sampled every 100 ms)
     * @param heapPerThousandBytes  heap used after GC with every lock held, less before, per 1,000 locks
     * @param renewals              renewals sent while the locks were held, over {@code windowSeconds}
     */
    record Result(Settings settings, long acquired, long acquireFailures, double acquireSeconds, long enqueues,
            long lostCallbacks, long lostListener, long invalid, long threadsBefore, long peakThreads,
            long peakDynamolockThreads, double heapPerThousandBytes, long renewals, double windowSeconds,
            long connections) {

        double renewalsPerSecond() {
            return windowSeconds == 0 ? 0 : renewals / windowSeconds;
        }
    }

    private RenewalCapacityScenario() {
    }

    static Result run(Env env) throws Exception {
        Settings settings = env.options.renewal();
        DynamoLockCompetitor.createTable(env.clients.sync(), TABLE);
        BenchMain.progress("renewal capacity: " + settings.locks() + " locks, lease " + settings.lease().toSeconds()
                + " s, every renewal answered after " + RENEWAL_ROUND_TRIP.toMillis() + " ms");
        Process worker = RemoteJvm.start(RenewalCapacityWorker.class, env.endpoint.toString(), TABLE,
                Long.toString(env.options.roundTrip().toMillis()), Integer.toString(settings.locks()),
                Long.toString(settings.lease().toMillis()), Long.toString(settings.heartbeat().toMillis()),
                Long.toString(RENEWAL_ROUND_TRIP.toMillis()), Long.toString(settings.hold().toMillis()));
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
                number(results, "heapPerThousandBytes"), count(results, "renewals"), number(results, "windowSeconds"),
                count(results, "connections"));
        BenchMain.progress("renewal capacity: " + result.lostCallbacks() + " of " + settings.locks() + " locks lost, "
                + Report.f0(result.renewalsPerSecond()) + " renewals/s sent");
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
