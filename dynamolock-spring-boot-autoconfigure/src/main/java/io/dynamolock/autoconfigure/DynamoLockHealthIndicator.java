package io.dynamolock.autoconfigure;

import io.dynamolock.core.LockInfo;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.TableBootstrap;
import java.util.List;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Health of dynamolock: {@code DOWN} if the lock table cannot be reached, is missing or has
 * the wrong keys; {@code UP} otherwise, with whether TTL is enabled (without it, items of
 * idle locks stay in the table) and the number of locks held and waited for.
 */
public class DynamoLockHealthIndicator extends AbstractHealthIndicator {

    private final LockTemplate lockTemplate;

    /** Checks {@code lockTemplate}'s table through the template's own client, whatever other clients exist. */
    public DynamoLockHealthIndicator(LockTemplate lockTemplate) {
        super("dynamolock health check failed");
        this.lockTemplate = lockTemplate;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        TableBootstrap.Status status = lockTemplate.checkTable();
        builder.withDetail("table", lockTemplate.tableName());
        if (!status.usable()) {
            builder.down().withDetail("problems", status.problems());
            return;
        }
        List<LockInfo> locks = lockTemplate.activeLocks();
        long holding = locks.stream().filter(LockInfo::holding).count();
        builder.up()
                .withDetail("ttlEnabled", status.ttlEnabled())
                .withDetail("holding", holding)
                .withDetail("waiting", locks.size() - holding);
        if (!status.ttlEnabled()) {
            builder.withDetail("warning", "TTL is not enabled on 'expiresAt': items of idle locks stay in the table");
        }
    }
}
