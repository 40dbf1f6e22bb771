package io.dynamolock.bench;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.TableBootstrap;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Waiting without threads (issue 11): one JVM, one {@code LockTemplate}, {@code entities} locks each taken by a
 * holder, and {@code waiters} acquisitions per lock queued behind it with {@code acquireAsync}, all waiting at once.
 * Prints the threads and heap the waits take, then releases every holder and times until every waiter has been
 * granted (each releases at once, so the queues drain one grant after another), checking that each lock was
 * granted in ticket order. DynamoDB Local runs in a process of its own.
 * <pre>
 * java -cp ... io.dynamolock.bench.AsyncWaitersMain [entities=1000] [waitersPerEntity=10]
 * </pre>
 * Leases and polls of 10 minutes keep DynamoDB Local (about 900 writes/s on 2 cores) out of the
 * measurement while the waiters wait: no renewal and no poll is due in the run, so grants come from the same-JVM
 * handoff, as they would for waiters behind holders of their own JVM.
 */
public final class AsyncWaitersMain {

    private AsyncWaitersMain() {
    }

    public static void main(String[] args) throws Exception {
        BenchMain.configureLogging();
        int entities = Integer.parseInt(args.length > 0 ? args[0] : "1000");
        int perEntity = Integer.parseInt(args.length > 1 ? args[1] : "10");
        DynamoDbProcess dynamo = DynamoDbProcess.start();
        try {
            DynamoDbClient client = DynamoDbClient.builder().endpointOverride(dynamo.endpoint()).region(Region.US_EAST_1)
                    .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")))
                    .httpClientBuilder(ApacheHttpClient.builder().maxConnections(100))
                    .build();
            dynamo.awaitServing(client);
            TableBootstrap.of(client, "waiters").createIfMissing();
            measure(client, entities, perEntity);
            client.close();
        }
        catch (Throwable ex) {
            ex.printStackTrace();
            dynamo.close();
            System.exit(1); // the application's pool threads would keep the JVM alive
        }
        dynamo.close();
        System.exit(0);
    }

    private static void measure(DynamoDbClient client, int entities, int perEntity) throws Exception {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        int threadsBefore = threads.getThreadCount();
        LockTemplate template = LockTemplate.builder(client).tableName("waiters").leaseDuration(Duration.ofMinutes(10))
                .pollInterval(Duration.ofMinutes(10), Duration.ofMinutes(10)).maxQueueLength(perEntity + 1).build();
        LockRequest.Builder[] requests = new LockRequest.Builder[entities];
        for (int e = 0; e < entities; e++) {
            requests[e] = LockRequest.builder("entity-" + e).wait(Duration.ofMinutes(5));
        }

        List<LockHandle> holders = new ArrayList<>(entities);
        ExecutorService pool = Executors.newFixedThreadPool(16);
        List<Future<LockHandle>> taking = new ArrayList<>();
        for (LockRequest.Builder request : requests) {
            taking.add(pool.submit(() -> template.acquire(request.build())));
        }
        for (Future<LockHandle> future : taking) {
            holders.add(future.get());
        }
        long heapHolders = JvmProbe.heapAfterGc();
        int threadsHolding = threads.getThreadCount();
        BenchMain.progress(String.format("%,d holders; queueing %,d async waiters", entities, entities * perEntity));

        // Every waiter, once granted, releases on the application's own pool, as the README advises for
        // blocking work chained to the future.
        Map<Integer, List<Long>> grants = new ConcurrentHashMap<>();
        AtomicInteger granted = new AtomicInteger();
        Peaks peaks = new Peaks(threads);
        threads.resetPeakThreadCount();
        long enqueueStart = System.nanoTime();
        List<CompletableFuture<Void>> waiters = new ArrayList<>(entities * perEntity);
        for (int w = 0; w < perEntity; w++) {
            for (int e = 0; e < entities; e++) {
                int entity = e;
                waiters.add(template.acquireAsync(requests[e].build()).thenAcceptAsync(lock -> {
                    grants.computeIfAbsent(entity, k -> new CopyOnWriteArrayList<>()).add(lock.fencingToken());
                    granted.incrementAndGet();
                    lock.release();
                }, pool));
            }
        }
        int total = entities * (perEntity + 1);
        peaks.until(() -> template.activeLocks().size() >= total);
        double enqueueSeconds = (System.nanoTime() - enqueueStart) / 1e9;
        int peakWhileEnqueueing = threads.getPeakThreadCount();
        BenchMain.progress(String.format("%,d waiters queued in %.1f s; waiting 5 s", entities * perEntity, enqueueSeconds));
        threads.resetPeakThreadCount();
        long quietUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        peaks.until(() -> System.nanoTime() - quietUntil >= 0);
        int peakWhileWaiting = threads.getPeakThreadCount();
        int threadsWaiting = threads.getThreadCount();
        long heapWaiting = JvmProbe.heapAfterGc();
        boolean noneGranted = granted.get() == 0;

        threads.resetPeakThreadCount();
        long releaseStart = System.nanoTime();
        holders.forEach(LockHandle::release);
        CompletableFuture<Void> all = CompletableFuture.allOf(waiters.toArray(CompletableFuture[]::new));
        peaks.until(all::isDone);
        all.get(10, TimeUnit.MINUTES);
        double drainSeconds = (System.nanoTime() - releaseStart) / 1e9;
        int peakWhileDraining = threads.getPeakThreadCount();
        long outOfOrder = grants.values().stream().filter(tokens -> !isAscending(tokens)).count();

        int waiterCount = entities * perEntity;
        System.out.println();
        System.out.println("| async waiters (issue 11) | value |");
        System.out.println("| --- | --- |");
        System.out.printf("| waiting at once in one JVM | %,d (%,d locks x %d, behind a holder each) |%n", waiterCount,
                entities, perEntity);
        System.out.printf("| queued (acquireAsync to all entries in the table) | %.1f s |%n", enqueueSeconds);
        System.out.printf("| granted while the holders held | %s |%n", noneGranted ? "none" : "SOME (wrong)");
        System.out.printf("| JVM threads: before the template / holding / peak while queueing / peak while waiting"
                + " / peak while draining | %d / %d / %d / %d / %d |%n", threadsBefore, threadsHolding,
                peakWhileEnqueueing, peakWhileWaiting, peakWhileDraining);
        System.out.printf("| dynamolock threads, peak: step (dynamolock-wait-) / request (dynamolock-request-) /"
                + " timer | %d / %d / %d |%n", peaks.steps, peaks.requests, peaks.timers);
        System.out.printf("| JVM threads while %,d wait | %d |%n", waiterCount, threadsWaiting);
        System.out.printf("| heap used after GC: holders only / with the waiters | %.1f MB / %.1f MB: %.2f KB per"
                + " waiter |%n", heapHolders / 1e6, heapWaiting / 1e6, (heapWaiting - heapHolders) / 1e3 / waiterCount);
        System.out.printf("| all granted after the holders' release | %.1f s (%,.0f grants/s, each a release"
                + " request) |%n", drainSeconds, waiterCount / drainSeconds);
        System.out.printf("| locks granted out of ticket order | %d of %,d |%n", outOfOrder, entities);
        pool.shutdown();
        template.close();
    }

    private static boolean isAscending(List<Long> tokens) {
        for (int i = 1; i < tokens.size(); i++) {
            if (tokens.get(i) <= tokens.get(i - 1)) {
                return false;
            }
        }
        return true;
    }

    /** Samples dynamolock's threads by name every 20 ms until a condition holds; peaks over all phases. */
    private static final class Peaks {

        private final ThreadMXBean threads;
        int steps;
        int requests;
        int timers;

        Peaks(ThreadMXBean threads) {
            this.threads = threads;
        }

        void until(BooleanSupplier done) throws InterruptedException {
            while (!done.getAsBoolean()) {
                steps = Math.max(steps, JvmProbe.threadsNamed("dynamolock-wait-"));
                requests = Math.max(requests, JvmProbe.threadsNamed("dynamolock-request-"));
                timers = Math.max(timers, JvmProbe.threadsNamed("dynamolock-lease-timer-"));
                TimeUnit.MILLISECONDS.sleep(20);
            }
        }
    }
}
