package io.dynamolock.bench;

import io.awspring.cloud.dynamodb.DynamoDbLockRegistry;
import io.awspring.cloud.dynamodb.DynamoDbLockRepository;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Lock;

/**
 * Spring Cloud AWS 4's {@link DynamoDbLockRegistry} (Spring Integration's {@code LockRegistry} on DynamoDB), at its
 * defaults, as a Spring user would declare it: one {@link DynamoDbLockRepository} on the asynchronous client and one
 * registry per JVM. Its defaults (from its source): one item per lock, taken by a conditional {@code PutItem} (absent,
 * ours, or expired), released by a conditional {@code DeleteItem}; a refused put is retried every 100 ms
 * ({@code idleBetweenTries}); lease 60 s, renewed only when the application calls {@code renewLock}. Within a JVM the
 * threads of one lock first queue on a local, non-fair {@code ReentrantLock}, so only one of them polls DynamoDB.
 */
final class SpringLockRegistryCompetitor implements Competitor {

    private final DynamoDbLockRepository repository;
    private final DynamoDbLockRegistry registry;

    SpringLockRegistryCompetitor(Clients clients, String table) {
        this.repository = initialized(clients, table);
        this.registry = new DynamoDbLockRegistry(repository);
    }

    /**
     * The table as its documentation says: the repository creates it when it starts if it is missing (key
     * {@code lockKey}, on-demand billing, TTL on {@code expireAt}).
     */
    static void createTable(Clients clients, String table) {
        initialized(clients, table).close();
    }

    /**
     * A started repository. Starting sends a DescribeTable (and creates the table if missing) in the background;
     * {@code isAcquired} of a key it does not hold waits for that to finish and sends nothing, so a scenario's
     * meter, reset after opening, does not see it.
     */
    private static DynamoDbLockRepository initialized(Clients clients, String table) {
        DynamoDbLockRepository repository = new DynamoDbLockRepository(clients.async(), table);
        repository.afterPropertiesSet();
        repository.isAcquired("no-such-lock");
        return repository;
    }

    @Override
    public Handle acquire(String entity, Duration wait) throws InterruptedException, TimeoutException {
        Lock lock = registry.obtain(entity);
        if (!lock.tryLock(wait.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new TimeoutException("No lock on " + entity + " within " + wait);
        }
        // Unlocked by the locking thread: the registry's local lock is a ReentrantLock.
        return lock::unlock;
    }

    @Override
    public void close() {
        repository.close();
    }
}
