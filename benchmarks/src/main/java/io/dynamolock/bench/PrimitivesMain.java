package io.dynamolock.bench;

import io.dynamolock.core.LockMode;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.TableBootstrap;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Read/write locks and locks of several entities (issue 13), against DynamoDB Local as a server in a process of its
 * own (so that an SDK interceptor sees every request; the embedded client bypasses interceptors).
 * <ol>
 * <li><b>Read throughput</b>: 8 readers and 1 writer, each with a template of its own (as 9 processes would
 * have), for {@code seconds} each: readers in {@code SHARED} mode and the writer {@code EXCLUSIVE}, then the same
 * load with every caller {@code EXCLUSIVE}. A read holds the lock for {@value #READ_MILLIS} ms, a write for
 * {@value #WRITE_MILLIS} ms, and the writer pauses {@value #WRITER_PAUSE_MILLIS} ms between writes. Each template
 * polls as by default, so a lock passes between them at the pace of polls: the figures show what sharing saves
 * across processes, not the same-JVM handoff.</li>
 * <li><b>Request cost</b>: uncontended lock-and-release cycles of one entity and of two entities, counting every
 * request the client sends.</li>
 * </ol>
 * <pre>
 * mvn -B -ntp -pl benchmarks -am -Pprimitives -DskipTests verify [-Dprimitives.args="10"]
 * </pre>
 */
public final class PrimitivesMain {

    static final int READ_MILLIS = 20;
    static final int WRITE_MILLIS = 20;
    static final int WRITER_PAUSE_MILLIS = 200;
    private static final int CYCLES = 200;
    private static final String TABLE = "primitives";

    private PrimitivesMain() {
    }

    public static void main(String[] args) throws Exception {
        BenchMain.configureLogging();
        int seconds = Integer.parseInt(args.length > 0 ? args[0] : "10");
        DynamoDbProcess dynamo = DynamoDbProcess.start();
        int status = 0;
        try {
            Counter requests = new Counter();
            try (DynamoDbClient client = Clients.sync(dynamo.endpoint(), 64, requests)) {
                dynamo.awaitServing(client);
                TableBootstrap.of(client, TABLE).createIfMissing();
                Throughput shared = throughput(client, LockMode.SHARED, seconds);
                Throughput exclusive = throughput(client, LockMode.EXCLUSIVE, seconds);
                System.out.println();
                System.out.printf("read throughput, 8 readers + 1 writer, %d s each (read %d ms, write %d ms, writer"
                        + " pause %d ms):%n", seconds, READ_MILLIS, WRITE_MILLIS, WRITER_PAUSE_MILLIS);
                System.out.printf("  readers SHARED, writer EXCLUSIVE : %7.1f reads/s, %5.1f writes/s%n",
                        shared.readsPerSecond(), shared.writesPerSecond());
                System.out.printf("  everyone EXCLUSIVE               : %7.1f reads/s, %5.1f writes/s%n",
                        exclusive.readsPerSecond(), exclusive.writesPerSecond());
                System.out.printf("  shared / exclusive reads         : %7.1f x%n",
                        shared.readsPerSecond() / exclusive.readsPerSecond());
                System.out.println();
                System.out.printf("requests per uncontended lock + release (%d cycles each):%n", CYCLES);
                System.out.printf("  one entity   : %.2f%n", cost(client, requests, List.of("cost-a")));
                System.out.printf("  two entities : %.2f%n", cost(client, requests, List.of("cost-b", "cost-a")));
            }
        }
        catch (Throwable ex) {
            ex.printStackTrace();
            status = 1;
        }
        dynamo.close();
        System.exit(status); // the templates' pool threads would keep the JVM alive
    }

    record Throughput(double readsPerSecond, double writesPerSecond) {
    }

    private static Throughput throughput(DynamoDbClient client, LockMode readers, int seconds) throws Exception {
        String entity = "price-list-" + readers;
        AtomicLong reads = new AtomicLong();
        AtomicLong writes = new AtomicLong();
        List<LockTemplate> templates = new ArrayList<>();
        ExecutorService threads = Executors.newFixedThreadPool(9);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        List<Future<?>> callers = new ArrayList<>();
        for (int i = 0; i < 9; i++) {
            boolean writer = i == 0;
            // The default polls (50 ms times the position, at most 1 s): faster ones would saturate DynamoDB Local
            // on a small machine and measure that instead.
            LockTemplate locks = LockTemplate.builder(client).tableName(TABLE).ownerName(writer ? "writer" : "reader-" + i)
                    .build();
            templates.add(locks);
            LockRequest request = LockRequest.builder(entity).mode(writer ? LockMode.EXCLUSIVE : readers)
                    .wait(Duration.ofSeconds(60)).build();
            callers.add(threads.submit(() -> {
                while (System.nanoTime() - end < 0) {
                    locks.execute(request, lock -> {
                        Thread.sleep(writer ? WRITE_MILLIS : READ_MILLIS);
                        return null;
                    });
                    (writer ? writes : reads).incrementAndGet();
                    if (writer) {
                        Thread.sleep(WRITER_PAUSE_MILLIS);
                    }
                }
                return null;
            }));
        }
        long start = System.nanoTime();
        for (Future<?> caller : callers) {
            caller.get();
        }
        double elapsed = (System.nanoTime() - start) / 1e9;
        threads.shutdown();
        templates.forEach(LockTemplate::close);
        BenchMain.progress(String.format("readers %s: %,d reads, %,d writes in %.1f s", readers, reads.get(),
                writes.get(), elapsed));
        return new Throughput(reads.get() / elapsed, writes.get() / elapsed);
    }

    /** Requests per acquire-and-release of {@code entities}, uncontended. */
    private static double cost(DynamoDbClient client, Counter requests, List<String> entities) {
        try (LockTemplate locks = LockTemplate.builder(client).tableName(TABLE).build()) {
            LockRequest request = LockRequest.builder(entities).build();
            locks.acquire(request).release(); // warm-up: the item exists from now on
            long before = requests.count.get();
            for (int i = 0; i < CYCLES; i++) {
                locks.acquire(request).release();
            }
            return (requests.count.get() - before) / (double) CYCLES;
        }
    }

    /** Counts every request the client sends, SDK retries included. */
    static final class Counter implements ExecutionInterceptor {

        final AtomicLong count = new AtomicLong();

        @Override
        public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
            count.incrementAndGet();
        }
    }
}
