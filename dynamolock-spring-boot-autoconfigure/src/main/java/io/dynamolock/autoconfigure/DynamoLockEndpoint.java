package io.dynamolock.autoconfigure;

import io.dynamolock.core.LockInfo;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.QueueSnapshot;
import java.util.List;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The {@code dynamolock} actuator endpoint: {@code /actuator/dynamolock} lists the locks this
 * instance holds and waits for; {@code /actuator/dynamolock/{entity}} and
 * {@code /actuator/dynamolock/{entity}/{namespace}} show a lock's queue as stored in DynamoDB
 * now (one strongly consistent read), whoever is in it.
 */
@Endpoint(id = "dynamolock")
public class DynamoLockEndpoint {

    private final LockTemplate lockTemplate;

    public DynamoLockEndpoint(LockTemplate lockTemplate) {
        this.lockTemplate = lockTemplate;
    }

    @ReadOperation
    public LocksDescriptor locks() {
        return new LocksDescriptor(lockTemplate.tableName(), lockTemplate.ownerName(), lockTemplate.activeLocks());
    }

    @ReadOperation
    public QueueDescriptor queue(@Selector String entity) {
        return queueInNamespace(entity, lockTemplate.defaultNamespace());
    }

    @ReadOperation
    public QueueDescriptor queueInNamespace(@Selector String entity, @Selector String namespace) {
        QueueSnapshot queue = lockTemplate.queue(entity, namespace);
        return new QueueDescriptor(lockTemplate.tableName(), queue.entity(), queue.namespace(), queue.nextTicket(),
                queue.entries());
    }

    /**
     * This instance's locks.
     *
     * @param table the lock table
     * @param owner this instance's owner name
     * @param locks the locks it holds or waits for
     */
    public record LocksDescriptor(String table, String owner, List<LockInfo> locks) implements OperationResponseBody {
    }

    /**
     * One lock's queue, lowest ticket (the holder, if live) first.
     *
     * @param table      the lock table
     * @param entity     the entity
     * @param namespace  the namespace
     * @param nextTicket the next ticket, or 0 when the lock has no item
     * @param entries    the queue entries
     */
    public record QueueDescriptor(String table, String entity, String namespace, long nextTicket,
            List<QueueSnapshot.Entry> entries) implements OperationResponseBody {
    }
}
