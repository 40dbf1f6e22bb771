package io.dynamolock.bench;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.TableBootstrap;
import io.dynamolock.core.WakeUpOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Where a cross-process handoff's time goes once the JVMs are warm (issue 12): two templates with clients and
 * wake-up endpoints of their own (as two processes have; one JVM, so the JIT warms up in seconds rather than
 * after the hundreds of thousands of grants a service sees), against DynamoDB Local in a process of its own with
 * the benchmark's simulated round trip. They hand one lock back and forth: the holder releases once the other
 * is queued, and each handoff is split into the release's own request (its call to its answer) and the rest
 * (its answer to the waiter's grant: the hint's trip and the waiter's threads). The first
 * {@code warm-up} handoffs are not counted.
 * <pre>
 * mvn -B -ntp -pl benchmarks -am -Phint-latency -DskipTests verify [-Dhint-latency.args="2000 500 5"]
 * </pre>
 * (warm-up handoffs, measured handoffs, simulated round trip in ms)
 */
public final class HintLatencyMain {

    private static final String TABLE = "hint_latency";
    private static final String SECRET = "hint-latency-secret-0123456789abcd";

    private HintLatencyMain() {
    }

    private record Granted(LockHandle lock, long atNanos) {
    }

    /** The figures of one kind of hint. */
    record Figures(String label, double[] releaseMillis, double[] afterAnswerMillis, double[] handoffMillis) {

        String line() {
            return String.format(Locale.ROOT, "| %s | %.1f | %.2f | %.2f | %.1f |", label,
                    Stats.percentile(handoffMillis, 50), Stats.percentile(releaseMillis, 50),
                    Stats.percentile(afterAnswerMillis, 50), Stats.percentile(afterAnswerMillis, 99));
        }
    }

    public static void main(String[] args) throws Exception {
        BenchMain.configureLogging();
        int warmUp = Integer.parseInt(args.length > 0 ? args[0] : "2000");
        int measured = Integer.parseInt(args.length > 1 ? args[1] : "500");
        Duration roundTrip = Duration.ofMillis(Long.parseLong(args.length > 2 ? args[2] : "5"));
        DynamoDbProcess dynamo = DynamoDbProcess.start();
        int status = 0;
        try {
            List<Figures> figures = new ArrayList<>();
            for (WakeUpOptions.Builder hints : List.of(WakeUpOptions.builder().bindAddress("127.0.0.1"),
                    WakeUpOptions.builder().bindAddress("127.0.0.1").secret(SECRET))) {
                figures.add(run(dynamo, hints, roundTrip, warmUp, measured));
            }
            System.out.println();
            System.out.println("Two templates hand one lock back and forth, " + measured + " handoffs after "
                    + warmUp + " to warm up; simulated round trip " + roundTrip.toMillis() + " ms.");
            System.out.println();
            System.out.println("| wake-up hints | handoff p50 ms | release request p50 ms | its answer to the grant p50"
                    + " ms | its answer to the grant p99 ms |");
            System.out.println("| --- | --- | --- | --- | --- |");
            figures.forEach(f -> System.out.println(f.line()));
        }
        catch (Exception ex) {
            ex.printStackTrace();
            status = 1;
        }
        finally {
            dynamo.close();
        }
        System.exit(status);
    }

    private static Figures run(DynamoDbProcess dynamo, WakeUpOptions.Builder hints, Duration roundTrip, int warmUp,
            int measured) throws Exception {
        WakeUpOptions options = hints.build();
        String label = options.authenticated() ? "authenticated" : "plain";
        try (DynamoDbClient clientA = Clients.sync(dynamo.endpoint(), 8, new MeteredNetwork(roundTrip));
                DynamoDbClient clientB = Clients.sync(dynamo.endpoint(), 8, new MeteredNetwork(roundTrip))) {
            dynamo.awaitServing(clientA);
            TableBootstrap.of(clientA, TABLE).createIfMissing();
            try (LockTemplate a = LockTemplate.builder(clientA).tableName(TABLE).ownerName("a").wakeUp(options).build();
                    LockTemplate b = LockTemplate.builder(clientB).tableName(TABLE).ownerName("b").wakeUp(options)
                            .build()) {
                String entity = "hint-latency-" + label;
                int total = warmUp + measured;
                double[] release = new double[measured];
                double[] afterAnswer = new double[measured];
                double[] handoff = new double[measured];
                ExecutorService waiters = Executors.newSingleThreadExecutor();
                try {
                    LockHandle held = a.acquire(entity, Duration.ofSeconds(5));
                    LockTemplate next = b;
                    for (int i = 0; i < total; i++) {
                        LockTemplate waiter = next;
                        CompletableFuture<Long> queued = new CompletableFuture<>();
                        // The grant's time as the waiting thread sees it, as a caller of acquire would.
                        Future<Granted> granted = waiters.submit(() -> {
                            queued.complete(System.nanoTime());
                            LockHandle lock = waiter.acquire(entity, Duration.ofSeconds(5));
                            return new Granted(lock, System.nanoTime());
                        });
                        // Release once the waiter's enqueue has surely landed: its call plus two round trips.
                        long sent = queued.get(5, TimeUnit.SECONDS);
                        Contenders.parkUntil(sent + 2 * roundTrip.toNanos() + Duration.ofMillis(5).toNanos());
                        long releaseCalled = System.nanoTime();
                        held.release();
                        long answered = System.nanoTime();
                        Granted grant = granted.get(5, TimeUnit.SECONDS);
                        held = grant.lock();
                        long grantedAt = grant.atNanos();
                        if (i >= warmUp) {
                            release[i - warmUp] = (answered - releaseCalled) / 1e6;
                            afterAnswer[i - warmUp] = (grantedAt - answered) / 1e6;
                            handoff[i - warmUp] = (grantedAt - releaseCalled) / 1e6;
                        }
                        next = waiter == a ? b : a;
                    }
                    held.release();
                }
                finally {
                    waiters.shutdownNow();
                }
                BenchMain.progress(label + " hints: " + measured + " handoffs measured");
                return new Figures(label, release, afterAnswer, handoff);
            }
        }
    }
}
