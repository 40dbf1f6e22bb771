package io.dynamolock.bench;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.ProtocolStep;
import io.dynamolock.core.TableBootstrap;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Renewal capacity (R12): one JVM, one {@code LockTemplate}, holding N locks while every renewal is applied at once
 * but answered after a delay (a hot partition, a far region). Prints the leases lost, the threads and the heap it
 * takes. DynamoDB Local runs in a process of its own, so the heap and threads measured are dynamolock's and the SDK's.
 * <pre>
 * java -cp ... io.dynamolock.bench.RenewalCapacityMain [locks=10000] [delayMs=200] [leaseS=30] [seconds=75]
 * </pre>
 * The heartbeat is half the lease; the run lasts several heartbeats and more than two leases.
 */
public final class RenewalCapacityMain {

    private RenewalCapacityMain() {
    }

    public static void main(String[] args) throws Exception {
        BenchMain.configureLogging();
        int locks = Integer.parseInt(arg(args, 0, "10000"));
        Duration delay = Duration.ofMillis(Long.parseLong(arg(args, 1, "200")));
        Duration lease = Duration.ofSeconds(Long.parseLong(arg(args, 2, "30")));
        Duration run = Duration.ofSeconds(Long.parseLong(arg(args, 3, "75")));
        LocalDynamo dynamo = startDynamo();
        try {
            measure(dynamo.endpoint(), locks, delay, lease, run);
        }
        finally {
            dynamo.process().destroyForcibly();
        }
        System.exit(0);
    }

    /** DynamoDB Local in a process of its own, and where it listens. */
    record LocalDynamo(Process process, URI endpoint) {
    }

    /** Starts DynamoDB Local apart, so that this JVM's threads and heap are dynamolock's and the SDK's only. */
    static LocalDynamo startDynamo() throws java.io.IOException {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        Process dynamo = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"), "-Xmx1g", "-cp",
                System.getProperty("java.class.path"), "com.amazonaws.services.dynamodbv2.local.main.ServerRunner",
                "-inMemory", "-port", Integer.toString(port), "-disableTelemetry").inheritIO().start();
        return new LocalDynamo(dynamo, URI.create("http://127.0.0.1:" + port));
    }

    private static void measure(URI endpoint, int locks, Duration delay, Duration lease, Duration run) throws Exception {
        AtomicLong renewals = new AtomicLong();
        ExecutionInterceptor slowRenewals = new ExecutionInterceptor() {
            @Override
            public void afterTransmission(Context.AfterTransmission context, ExecutionAttributes attributes) {
                if (attributes.getAttribute(ProtocolStep.ATTRIBUTE) == ProtocolStep.RENEW) {
                    renewals.incrementAndGet();
                    sleep(delay);
                }
            }
        };
        // The client's connection pool caps the requests in flight: size it for them (Apache's default is 50).
        DynamoDbClient client = DynamoDbClient.builder().endpointOverride(endpoint).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")))
                .httpClientBuilder(ApacheHttpClient.builder().maxConnections(1000))
                .overrideConfiguration(c -> c.addExecutionInterceptor(slowRenewals))
                .build();
        waitForServer(client);
        TableBootstrap.of(client, "capacity").createIfMissing();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long heapBefore = usedHeapAfterGc();
        int threadsBefore = threads.getThreadCount();

        LockTemplate template = LockTemplate.builder(client).tableName("capacity").leaseDuration(lease)
                .heartbeatInterval(lease.dividedBy(2)).build();
        AtomicInteger lost = new AtomicInteger();
        List<LockHandle> held = new ArrayList<>(locks);
        ExecutorService acquirers = Executors.newFixedThreadPool(16);
        List<Future<LockHandle>> pending = new ArrayList<>(locks);
        long acquireStart = System.nanoTime();
        for (int i = 0; i < locks; i++) {
            String entity = "capacity-" + i;
            pending.add(acquirers.submit(() -> template.acquire(LockRequest.builder(entity).wait(Duration.ofSeconds(30)).build())));
        }
        for (Future<LockHandle> future : pending) {
            LockHandle lock = future.get();
            lock.onLost(handle -> lost.incrementAndGet());
            held.add(lock);
        }
        acquirers.shutdown();
        BenchMain.progress(String.format("acquired %,d locks in %.1f s; holding them %d s with every renewal answered after %d ms",
                locks, (System.nanoTime() - acquireStart) / 1e9, run.toSeconds(), delay.toMillis()));

        long renewalsAtStart = renewals.get();
        int peakRequestThreads = 0;
        long end = System.nanoTime() + run.toNanos();
        threads.resetPeakThreadCount();
        while (System.nanoTime() < end) {
            peakRequestThreads = Math.max(peakRequestThreads, requestThreads());
            TimeUnit.MILLISECONDS.sleep(100);
        }
        long heapHolding = usedHeapAfterGc();
        long valid = held.stream().filter(LockHandle::isValid).count();
        double renewalsPerSecond = (renewals.get() - renewalsAtStart) / (double) run.toSeconds();

        System.out.println();
        System.out.println("| renewal capacity (R12) | value |");
        System.out.println("| --- | --- |");
        System.out.printf("| locks held by one JVM | %,d |%n", locks);
        System.out.printf("| renewal answered after | %d ms (applied at once) |%n", delay.toMillis());
        System.out.printf("| lease / heartbeat | %d s / %d s, held %d s |%n", lease.toSeconds(), lease.toSeconds() / 2,
                run.toSeconds());
        System.out.printf("| leases lost | %d (valid at the end: %,d of %,d) |%n", lost.get(), valid, locks);
        System.out.printf("| renewals per second | %.0f |%n", renewalsPerSecond);
        System.out.printf("| peak dynamolock request threads | %d (%.1f per 1,000 locks) |%n", peakRequestThreads,
                peakRequestThreads * 1000.0 / locks);
        System.out.printf("| JVM threads, before / peak while holding | %d / %d |%n", threadsBefore,
                threads.getPeakThreadCount());
        System.out.printf("| heap used after GC, before / holding | %.1f MB / %.1f MB (%.2f MB per 1,000 locks) |%n",
                heapBefore / 1e6, heapHolding / 1e6, (heapHolding - heapBefore) / 1e6 * 1000 / locks);
        held.forEach(LockHandle::release);
        template.close();
        client.close();
    }

    private static int requestThreads() {
        return threadsNamed("dynamolock-request-");
    }

    static int threadsNamed(String prefix) {
        return (int) Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.getName().startsWith(prefix)).count();
    }

    static long usedHeapAfterGc() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            TimeUnit.MILLISECONDS.sleep(200);
        }
        Runtime runtime = Runtime.getRuntime();
        return runtime.totalMemory() - runtime.freeMemory();
    }

    static void waitForServer(DynamoDbClient client) throws InterruptedException {
        for (int i = 0; ; i++) {
            try {
                client.listTables();
                return;
            }
            catch (RuntimeException notYet) {
                if (i > 100) {
                    throw notYet;
                }
                TimeUnit.MILLISECONDS.sleep(200);
            }
        }
    }

    private static void sleep(Duration delay) {
        try {
            Thread.sleep(delay.toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    static String arg(String[] args, int index, String fallback) {
        return args.length > index ? args[index] : fallback;
    }
}
