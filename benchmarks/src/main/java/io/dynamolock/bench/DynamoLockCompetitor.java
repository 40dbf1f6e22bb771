package io.dynamolock.bench;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.TableBootstrap;
import io.dynamolock.core.WakeUpOptions;
import java.time.Duration;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/** dynamolock's {@link LockTemplate}: defaults, or a shorter shortest poll interval, or wake-up hints on. */
final class DynamoLockCompetitor implements Competitor {

    private final LockTemplate template;

    DynamoLockCompetitor(DynamoDbClient client, String table, Duration minPoll, WakeUpOptions wakeUp) {
        LockTemplate.Builder builder = LockTemplate.builder(client).tableName(table).wakeUp(wakeUp);
        if (minPoll != null) {
            builder.pollInterval(minPoll, Duration.ofSeconds(1));
        }
        this.template = builder.build();
    }

    static void createTable(DynamoDbClient client, String table) {
        TableBootstrap.of(client, table).createIfMissing();
    }

    @Override
    public Handle acquire(String entity, Duration wait) {
        LockHandle lock = template.acquire(entity, wait);
        return new Handle() {
            @Override
            public void release() {
                lock.release();
            }

            @Override
            public long token() {
                return lock.fencingToken();
            }
        };
    }

    @Override
    public void close() {
        template.close();
    }
}
