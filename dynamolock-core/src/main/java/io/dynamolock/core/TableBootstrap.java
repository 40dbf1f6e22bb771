package io.dynamolock.core;

import io.dynamolock.core.internal.TableShape;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.MultiRegionConsistency;
import software.amazon.awssdk.services.dynamodb.model.ReplicaDescription;
import software.amazon.awssdk.services.dynamodb.model.ResourceInUseException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;
import software.amazon.awssdk.services.dynamodb.model.TimeToLiveStatus;

/**
 * Creates or checks the lock table: partition key {@code pk} (S), sort key {@code sk}
 * (S), on-demand billing, TTL on {@code expiresAt}. Safe to run from many instances at
 * once (a rolling deploy, a scale-out): every step tolerates the others' steps.
 *
 * <p>A global table whose replicas are eventually consistent is refused: a conditional
 * write in each of two regions can both succeed, so two holders could each take the
 * lock. Use a single-region table, or one with multi-region strong consistency.
 *
 * <pre>{@code
 * TableBootstrap.of(dynamoDbClient, "dynamolock").createIfMissing();   // create, enable TTL, wait until active
 * TableBootstrap.of(dynamoDbClient, "dynamolock").verify();            // or fail fast if it is wrong
 * }</pre>
 */
public final class TableBootstrap {

    private static final Logger log = LoggerFactory.getLogger(TableBootstrap.class);

    private final DynamoDbClient client;
    private final String tableName;

    private TableBootstrap(DynamoDbClient client, String tableName) {
        this.client = Objects.requireNonNull(client, "dynamoDbClient must not be null");
        this.tableName = TableShape.requireTableName(tableName);
    }

    /** @throws LockOptionException if {@code tableName} is not a name DynamoDB accepts */
    public static TableBootstrap of(DynamoDbClient client, String tableName) {
        return new TableBootstrap(client, tableName);
    }

    /**
     * What is known of the table.
     *
     * @param exists     whether the table exists
     * @param problems   what makes it unusable (wrong keys), empty when usable
     * @param ttlEnabled whether TTL is enabled on {@code expiresAt}; without it idle locks' items stay
     */
    public record Status(boolean exists, List<String> problems, boolean ttlEnabled) {

        public Status {
            problems = List.copyOf(problems);
        }

        public boolean usable() {
            return exists && problems.isEmpty();
        }
    }

    /**
     * Creates the table if it is missing, waits until it is active, enables TTL if it is off, then verifies it
     * (a table that is there and has TTL on needs only DescribeTable and DescribeTimeToLive). Other
     * instances doing the same at the same time are no trouble: a table being created or already there, and
     * TTL being enabled or enabled already, all count as done. An existing table that cannot hold locks is
     * refused without being changed.
     *
     * @throws LockTableException if the table cannot hold locks, or has TTL on another attribute
     */
    public Status createIfMissing() {
        if (missing()) { // asked first: a role that may not create tables still starts on a table that is there
            try {
                client.createTable(b -> b.tableName(tableName)
                        .billingMode(BillingMode.PAY_PER_REQUEST)
                        .attributeDefinitions(stringAttribute(TableShape.PARTITION_KEY),
                                stringAttribute(TableShape.SORT_KEY))
                        .keySchema(key(TableShape.PARTITION_KEY, KeyType.HASH),
                                key(TableShape.SORT_KEY, KeyType.RANGE)));
                log.info("Created lock table '{}'", tableName);
            }
            catch (ResourceInUseException ex) {
                log.debug("Lock table '{}' was created by another instance meanwhile", tableName);
            }
        }
        client.waiter().waitUntilTableExists(b -> b.tableName(tableName),
                w -> w.maxAttempts(60).waitTimeout(Duration.ofMinutes(5)));
        Status status = check();
        if (!status.usable()) {
            return verify(); // throws: a table that is not ours to use is left as it is, TTL included
        }
        if (!status.ttlEnabled()) {
            String other = ttlOnOtherAttribute();
            if (other != null) {
                throw new LockTableException(ttlElsewhere(other) + "; give dynamolock a table of its own"
                        + " (createIfMissing creates it), or enable TTL on '" + TableShape.TTL_ATTRIBUTE
                        + "' in place of '" + other + "' if nothing else relies on it");
            }
            enableTtl();
        }
        return verify();
    }

    private boolean missing() {
        try {
            client.describeTable(b -> b.tableName(tableName));
            return false;
        }
        catch (ResourceNotFoundException ex) {
            return true;
        }
    }

    /** The attribute TTL is on (enabled or being enabled), if not ours; {@code null} otherwise. */
    private String ttlOnOtherAttribute() {
        var ttl = client.describeTimeToLive(b -> b.tableName(tableName)).timeToLiveDescription();
        boolean on = ttl != null && (ttl.timeToLiveStatus() == TimeToLiveStatus.ENABLED
                || ttl.timeToLiveStatus() == TimeToLiveStatus.ENABLING);
        return on && !TableShape.TTL_ATTRIBUTE.equals(ttl.attributeName()) ? ttl.attributeName() : null;
    }

    private String ttlElsewhere(String other) {
        return "Lock table '" + tableName + "' has TTL on '" + other + "', and a table has one TTL attribute:"
                + " dynamolock needs it on '" + TableShape.TTL_ATTRIBUTE + "', or the items of idle locks stay in"
                + " the table";
    }

    private void enableTtl() {
        try {
            client.updateTimeToLive(b -> b.tableName(tableName)
                    .timeToLiveSpecification(s -> s.attributeName(TableShape.TTL_ATTRIBUTE).enabled(true)));
            log.info("Enabled TTL on '{}' of lock table '{}'", TableShape.TTL_ATTRIBUTE, tableName);
        }
        catch (DynamoDbException ex) {
            // Another instance enabled it between our check and our request ("TimeToLive is already enabled"),
            // or is enabling it now ("already being updated"): done either way if TTL is on our attribute.
            if (!isValidationError(ex) || !check().ttlEnabled()) {
                throw ex;
            }
            log.debug("TTL of lock table '{}' was enabled by another instance", tableName);
        }
    }

    private static boolean isValidationError(DynamoDbException ex) {
        return ex.awsErrorDetails() != null && "ValidationException".equals(ex.awsErrorDetails().errorCode());
    }

    /**
     * Checks the table and returns its status.
     *
     * @throws LockTableException if it is missing, has the wrong keys, or is a global table with eventually
     *                            consistent replicas; a disabled TTL is only logged
     */
    public Status verify() {
        Status status = check();
        if (!status.exists()) {
            throw new LockTableException("Lock table '" + tableName + "' does not exist. Create it with "
                    + TableShape.DESCRIPTION + " (TableBootstrap.createIfMissing() does)");
        }
        if (!status.problems().isEmpty()) {
            throw new LockTableException("Lock table '" + tableName + "' cannot hold locks: "
                    + String.join("; ", status.problems()) + ". Expected " + TableShape.DESCRIPTION
                    + "; point dynamolock at another table or recreate this one");
        }
        if (!status.ttlEnabled()) {
            String other = ttlOnOtherAttribute();
            if (other != null) {
                log.warn("{}. Give dynamolock a table of its own", ttlElsewhere(other));
            }
            else {
                log.warn("TTL is not enabled on '{}' of lock table '{}': items of idle locks will stay in the table."
                        + " Enable it: aws dynamodb update-time-to-live --table-name {} --time-to-live-specification"
                        + " Enabled=true,AttributeName={}", TableShape.TTL_ATTRIBUTE, tableName, tableName,
                        TableShape.TTL_ATTRIBUTE);
            }
        }
        return status;
    }

    /** The table's status, without throwing for a missing or wrong table. */
    public Status check() {
        TableDescription table;
        try {
            table = client.describeTable(b -> b.tableName(tableName)).table();
        }
        catch (ResourceNotFoundException ex) {
            return new Status(false, List.of("table does not exist"), false);
        }
        List<String> problems = new ArrayList<>();
        expectKey(table, TableShape.PARTITION_KEY, KeyType.HASH, problems);
        expectKey(table, TableShape.SORT_KEY, KeyType.RANGE, problems);
        if (table.keySchema().size() != 2) {
            problems.add("key schema is " + describeKeys(table) + ", not exactly two keys");
        }
        if (table.hasReplicas() && !table.replicas().isEmpty()
                && table.multiRegionConsistency() != MultiRegionConsistency.STRONG) {
            problems.add("it is a global table with eventually consistent replicas in "
                    + table.replicas().stream().map(ReplicaDescription::regionName).toList() + " (multi-region"
                    + " consistency " + table.multiRegionConsistencyAsString() + "): a conditional write in each of"
                    + " two regions can both succeed, so two holders could take one lock. Use a single-region table,"
                    + " or a global table created with multi-region strong consistency (MultiRegionConsistency=STRONG)");
        }
        var ttl = client.describeTimeToLive(b -> b.tableName(tableName)).timeToLiveDescription();
        boolean ttlEnabled = ttl != null && TableShape.TTL_ATTRIBUTE.equals(ttl.attributeName())
                && (ttl.timeToLiveStatus() == TimeToLiveStatus.ENABLED || ttl.timeToLiveStatus() == TimeToLiveStatus.ENABLING);
        return new Status(true, problems, ttlEnabled);
    }

    private static void expectKey(TableDescription table, String name, KeyType type, List<String> problems) {
        boolean keyed = table.keySchema().stream().anyMatch(k -> k.attributeName().equals(name) && k.keyType() == type);
        boolean string = table.attributeDefinitions().stream()
                .anyMatch(a -> a.attributeName().equals(name) && a.attributeType() == ScalarAttributeType.S);
        if (!keyed || !string) {
            problems.add("no " + (type == KeyType.HASH ? "partition" : "sort") + " key '" + name + "' of type S (has "
                    + describeKeys(table) + ")");
        }
    }

    private static String describeKeys(TableDescription table) {
        return table.keySchema().stream().map(k -> k.attributeName() + " " + k.keyTypeAsString() + " "
                + table.attributeDefinitions().stream().filter(a -> a.attributeName().equals(k.attributeName()))
                        .map(AttributeDefinition::attributeTypeAsString).findFirst().orElse("?"))
                .toList().toString();
    }

    private static AttributeDefinition stringAttribute(String name) {
        return AttributeDefinition.builder().attributeName(name).attributeType(ScalarAttributeType.S).build();
    }

    private static KeySchemaElement key(String name, KeyType type) {
        return KeySchemaElement.builder().attributeName(name).keyType(type).build();
    }
}
