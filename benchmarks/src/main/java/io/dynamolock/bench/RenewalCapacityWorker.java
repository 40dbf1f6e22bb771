package io.dynamolock.bench;

import ch.qos.logback.classic.Level;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockListener;
import io.dynamolock.core.LockTemplate;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The JVM of the renewal-capacity measurement: one {@link LockTemplate} that takes {@code locks} locks and holds them
 * while every renewal is slow, and nothing else (DynamoDB Local runs in the benchmark's JVM, so that its threads
 * and heap are not counted here). Started by {@link RenewalCapacityScenario}; answers on stdout with
 * {@code RESULT <name> <value>} lines, then {@code DONE}.
 * <p>
 * Args: endpoint, table, simulated round trip ms, locks, lease ms, heartbeat ms, renewal round trip ms, hold ms.
 */
public final class RenewalCapacityWorker {

    /** Threads that take the locks: enough to keep DynamoDB Local busy through a 5 ms round trip. */
    static final int ACQUIRING_THREADS = 32;

    /**
     * HTTP connections the client allows: more than the template's request threads (at most 500) and the acquiring
     * threads together, so that the pool is not what limits renewals.
     */
    static final int CONNECTIONS = 1_000;

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private RenewalCapacityWorker() {
    }

    public static void main(String[] args) throws Exception {
        BenchMain.configureLogging();
        // Every lost lease is logged at WARN; thousands of them would bury the benchmark's output, and they are counted.
        ((ch.qos.logback.classic.Logger) LoggerFactory.getLogger("io.dynamolock")).setLevel(Level.ERROR);
        URI endpoint = URI.create(args[0]);
        String table = args[1];
        Duration roundTrip = Duration.ofMillis(Long.parseLong(args[2]));
        int locks = Integer.parseInt(args[3]);
        Duration lease = Duration.ofMillis(Long.parseLong(args[4]));
        Duration heartbeat = Duration.ofMillis(Long.parseLong(args[5]));
        Duration renewalRoundTrip = Duration.ofMillis(Long.parseLong(args[6]));
        Duration hold = Duration.ofMillis(Long.parseLong(args[7]));
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);

        SlowRenewals slow = new SlowRenewals(renewalRoundTrip.minus(roundTrip));
        int threadsBefore = THREADS.getThreadCount();
        ThreadSampler sampler = new ThreadSampler();
        LongAdder lostByListener = new LongAdder();
        LongAdder lostByCallback = new LongAdder();
        try (DynamoDbClient client = Clients.sync(endpoint, CONNECTIONS, new MeteredNetwork(roundTrip), slow);
                LockTemplate template = LockTemplate.builder(client).tableName(table).leaseDuration(lease)
                        .heartbeatInterval(heartbeat).listener(new LockListener() {
                            @Override
                            public void onLost(LockHandle lock) {
                                lostByListener.increment();
                            }
                        }).build()) {
            warmUp(template);
            slow.arm();
            long heapBefore = JvmProbe.heapAfterGc();

            AtomicReferenceArray<LockHandle> held = new AtomicReferenceArray<>(locks);
            AtomicInteger failures = new AtomicInteger();
            long acquireStart = System.nanoTime();
            ExecutorService acquiring = Executors.newFixedThreadPool(ACQUIRING_THREADS);
            for (int i = 0; i < locks; i++) {
                int index = i;
                acquiring.execute(() -> {
                    try {
                        LockHandle lock = template.acquire("held-" + index, Env.WAIT);
                        lock.onLost(lost -> lostByCallback.increment());
                        held.set(index, lock);
                    }
                    catch (RuntimeException ex) {
                        failures.incrementAndGet();
                    }
                });
            }
            acquiring.shutdown();
            acquiring.awaitTermination(10, TimeUnit.MINUTES);
            double acquireSeconds = (System.nanoTime() - acquireStart) / 1e9;
            progress(out, "took " + (locks - failures.get()) + " of " + locks + " locks in "
                    + String.format("%.1f", acquireSeconds) + " s; holding them for " + hold.toSeconds() + " s");
            long heapHeld = JvmProbe.heapAfterGc();

            // The acquiring threads are gone: from here on, the threads are the template's, the SDK's and ours.
            THREADS.resetPeakThreadCount();
            long renewalsBefore = slow.renewals();
            long windowStart = System.nanoTime();
            Contenders.parkUntil(windowStart + hold.toNanos());
            double windowSeconds = (System.nanoTime() - windowStart) / 1e9;
            long renewals = slow.renewals() - renewalsBefore;
            int invalid = 0;
            for (int i = 0; i < locks; i++) {
                LockHandle lock = held.get(i);
                if (lock != null && !lock.isValid()) {
                    invalid++;
                }
            }
            sampler.close();

            result(out, "acquired", locks - failures.get());
            result(out, "acquireFailures", failures.get());
            result(out, "acquireSeconds", acquireSeconds);
            result(out, "enqueues", slow.enqueues());
            result(out, "delayedRenewals", slow.delayed());
            result(out, "lostCallbacks", lostByCallback.sum());
            result(out, "lostListener", lostByListener.sum());
            result(out, "invalid", invalid);
            result(out, "threadsBefore", threadsBefore);
            result(out, "peakThreads", THREADS.getPeakThreadCount());
            result(out, "peakDynamolockThreads", sampler.peakDynamolock());
            result(out, "peakRequestThreads", sampler.peakRequest());
            result(out, "heapBeforeBytes", heapBefore);
            result(out, "heapHeldBytes", heapHeld);
            result(out, "renewals", renewals);
            result(out, "windowSeconds", windowSeconds);
            result(out, "connections", CONNECTIONS);
        }
        out.println("DONE");
        // Locks still held are abandoned (their entries expire); the SDK may leave non-daemon threads behind.
        System.exit(0);
    }

    /** Loads and compiles the lock's path, so that the heap baseline holds the SDK's caches already. */
    private static void warmUp(LockTemplate template) {
        for (int i = 0; i < 50; i++) {
            template.acquire("warmup-" + i, Env.WAIT).release();
        }
    }

    private static void result(PrintStream out, String name, Object value) {
        out.println("RESULT " + name + " " + value);
    }

    private static void progress(PrintStream out, String message) {
        out.println("PROGRESS " + message);
    }

    /**
     * The most live threads named {@code dynamolock*}, and of them {@code dynamolock-request-*} (the template's
     * request pool), seen; sampled every 100 ms on a thread of its own.
     */
    private static final class ThreadSampler implements AutoCloseable {

        private final AtomicInteger peakDynamolock = new AtomicInteger();
        private final AtomicInteger peakRequest = new AtomicInteger();
        private final Thread thread = new Thread(this::sample, "bench-thread-sampler");

        ThreadSampler() {
            thread.setDaemon(true);
            thread.start();
        }

        private void sample() {
            while (!Thread.currentThread().isInterrupted()) {
                int dynamolock = 0;
                int request = 0;
                for (ThreadInfo info : THREADS.getThreadInfo(THREADS.getAllThreadIds())) {
                    if (info != null && info.getThreadName().startsWith("dynamolock")) {
                        dynamolock++;
                        if (info.getThreadName().startsWith("dynamolock-request-")) {
                            request++;
                        }
                    }
                }
                peakDynamolock.accumulateAndGet(dynamolock, Math::max);
                peakRequest.accumulateAndGet(request, Math::max);
                try {
                    Thread.sleep(100);
                }
                catch (InterruptedException ex) {
                    return;
                }
            }
        }

        int peakDynamolock() {
            return peakDynamolock.get();
        }

        int peakRequest() {
            return peakRequest.get();
        }

        @Override
        public void close() throws InterruptedException {
            thread.interrupt();
            thread.join();
        }
    }
}
