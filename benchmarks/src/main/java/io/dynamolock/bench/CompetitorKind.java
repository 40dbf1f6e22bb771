package io.dynamolock.bench;

import java.time.Duration;
import java.util.function.BiConsumer;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/** The competitors of a run, each with its own table (the three lock designs need different schemas). */
enum CompetitorKind {

    DYNAMOLOCK("dynamolock", "dynamolock (defaults)", DynamoLockCompetitor::createTable),
    DYNAMOLOCK_FAST_POLL("dynamolock-poll10", "dynamolock (poll 10 ms)", DynamoLockCompetitor::createTable),
    AWS_DEFAULTS("aws", "AWS lock client (defaults)", AwsLockClientCompetitor::createTable),
    AWS_TUNED("aws-tuned", "AWS lock client (refresh 50 ms)", AwsLockClientCompetitor::createTable),
    RETRY("retry", "conditional put + backoff", RetryLockCompetitor::createTable);

    final String id;
    final String label;
    private final BiConsumer<DynamoDbClient, String> tableCreator;

    CompetitorKind(String id, String label, BiConsumer<DynamoDbClient, String> tableCreator) {
        this.id = id;
        this.label = label;
        this.tableCreator = tableCreator;
    }

    String table() {
        return "bench-" + id;
    }

    void createTable(DynamoDbClient client) {
        tableCreator.accept(client, table());
    }

    Competitor open(DynamoDbClient client) {
        return switch (this) {
            case DYNAMOLOCK -> new DynamoLockCompetitor(client, table(), null);
            case DYNAMOLOCK_FAST_POLL -> new DynamoLockCompetitor(client, table(), Duration.ofMillis(10));
            case AWS_DEFAULTS -> new AwsLockClientCompetitor(client, table(), false);
            case AWS_TUNED -> new AwsLockClientCompetitor(client, table(), true);
            case RETRY -> new RetryLockCompetitor(client, table());
        };
    }

    static CompetitorKind byId(String id) {
        for (CompetitorKind kind : values()) {
            if (kind.id.equals(id)) {
                return kind;
            }
        }
        throw new IllegalArgumentException("No competitor '" + id + "'");
    }
}
