package io.dynamolock.autoconfigure;

import io.dynamolock.core.test.DynamoDbLocal;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** Test helpers: the {@code dynamolock.*} properties that point at the shared DynamoDB Local, and a thread race. */
public final class DynamoDbLocalProperties {

    private DynamoDbLocalProperties() {
    }

    /** The client settings of the shared DynamoDB Local, the lock table, and {@code more}. */
    public static String[] of(String table, String... more) {
        return Stream.concat(Stream.of("dynamolock.table-name=" + table,
                "dynamolock.dynamodb.endpoint=" + DynamoDbLocal.shared().endpoint(),
                "dynamolock.dynamodb.region=us-east-1",
                "dynamolock.dynamodb.access-key-id=local",
                "dynamolock.dynamodb.secret-access-key=local"), Stream.of(more)).toArray(String[]::new);
    }

    /** Starts {@code threads} threads at once, each running {@code work} {@code times} times, and waits for all. */
    public static void race(int threads, int times, Callable<?> work) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch start = new CountDownLatch(1);
            Future<?>[] done = new Future<?>[threads];
            for (int t = 0; t < threads; t++) {
                done[t] = pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < times; i++) {
                        work.call();
                    }
                    return null;
                });
            }
            start.countDown();
            for (Future<?> future : done) {
                future.get(2, TimeUnit.MINUTES);
            }
        }
        finally {
            pool.shutdownNow();
        }
    }
}
