package io.dynamolock.bench;

import io.dynamolock.core.WakeUpOptions;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.function.BiConsumer;

/** The competitors of a run, each with its own table (the four lock designs need different schemas). */
enum CompetitorKind {

    DYNAMOLOCK("dynamolock", "dynamolock (defaults)", (c, t) -> DynamoLockCompetitor.createTable(c.sync(), t)),
    DYNAMOLOCK_FAST_POLL("dynamolock-poll10", "dynamolock (poll 10 ms)",
            (c, t) -> DynamoLockCompetitor.createTable(c.sync(), t)),
    DYNAMOLOCK_HINTS("dynamolock-hints", "dynamolock (wake-up hints, plain)",
            (c, t) -> DynamoLockCompetitor.createTable(c.sync(), t)),
    DYNAMOLOCK_HINTS_AUTH("dynamolock-hints-auth", "dynamolock (wake-up hints, authenticated)",
            (c, t) -> DynamoLockCompetitor.createTable(c.sync(), t)),
    AWS_DEFAULTS("aws", "AWS lock client (defaults)", (c, t) -> AwsLockClientCompetitor.createTable(c.sync(), t)),
    AWS_TUNED("aws-tuned", "AWS lock client (refresh 50 ms)",
            (c, t) -> AwsLockClientCompetitor.createTable(c.sync(), t)),
    SPRING("spring", "Spring Cloud AWS DynamoDbLockRegistry (defaults)", SpringLockRegistryCompetitor::createTable),
    RETRY("retry", "conditional put + backoff", (c, t) -> RetryLockCompetitor.createTable(c.sync(), t));

    /** The secret the benchmark's processes share for authenticated hints: a benchmark's, not a real one. */
    private static final String HINT_SECRET = "benchmark-shared-secret-0123456789";

    final String id;
    final String label;
    private final BiConsumer<Clients, String> tableCreator;

    CompetitorKind(String id, String label, BiConsumer<Clients, String> tableCreator) {
        this.id = id;
        this.label = label;
        this.tableCreator = tableCreator;
    }

    String table() {
        return "bench-" + id;
    }

    void createTable(Clients clients) {
        tableCreator.accept(clients, table());
    }

    Competitor open(Clients clients) {
        return switch (this) {
            case DYNAMOLOCK -> new DynamoLockCompetitor(clients.sync(), table(), null, WakeUpOptions.disabled());
            case DYNAMOLOCK_FAST_POLL -> new DynamoLockCompetitor(clients.sync(), table(), Duration.ofMillis(10),
                    WakeUpOptions.disabled());
            // Every JVM of the run is on this host: loopback, a free port each.
            case DYNAMOLOCK_HINTS -> new DynamoLockCompetitor(clients.sync(), table(), null,
                    WakeUpOptions.builder().bindAddress("127.0.0.1").build());
            case DYNAMOLOCK_HINTS_AUTH -> new DynamoLockCompetitor(clients.sync(), table(), null,
                    WakeUpOptions.builder().bindAddress("127.0.0.1").secret(HINT_SECRET).build());
            case AWS_DEFAULTS -> new AwsLockClientCompetitor(clients.sync(), table(), false);
            case AWS_TUNED -> new AwsLockClientCompetitor(clients.sync(), table(), true);
            case SPRING -> new SpringLockRegistryCompetitor(clients, table());
            case RETRY -> new RetryLockCompetitor(clients.sync(), table());
        };
    }

    /** The competitor of that id, or empty. */
    static Optional<CompetitorKind> byId(String id) {
        return Arrays.stream(values()).filter(kind -> kind.id.equals(id)).findFirst();
    }
}
