package io.dynamolock.core;

import io.dynamolock.core.internal.Printable;
import io.dynamolock.core.internal.TableShape;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.LimitExceededException;
import software.amazon.awssdk.services.dynamodb.model.MultiRegionConsistency;
import software.amazon.awssdk.services.dynamodb.model.ReplicaDescription;
import software.amazon.awssdk.services.dynamodb.model.ResourceInUseException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;
import software.amazon.awssdk.services.dynamodb.model.TableStatus;
import software.amazon.awssdk.services.dynamodb.model.TimeToLiveDescription;
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

    /** How long {@link #createIfMissing}, {@link #verify} or {@link #check} may take unless told otherwise. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(1);

    /** Between two looks at a table another instance is creating. */
    private static final Duration CREATING_POLL = Duration.ofSeconds(2);

    /** How a problem of a table that is there but serves no request now begins. */
    private static final String UNAVAILABLE = "it serves no request while ";

    /** What a look at a table being created is left at least, to be answered in. */
    private static final Duration LAST_LOOK = Duration.ofSeconds(1);

    private final DynamoDbClient client;
    private final String tableName;
    private final Duration timeout;

    private TableBootstrap(DynamoDbClient client, String tableName, Duration timeout) {
        this.client = Objects.requireNonNull(client, "dynamoDbClient must not be null");
        this.tableName = TableShape.requireTableName(tableName);
        this.timeout = timeout;
    }

    /** @throws LockOptionException if {@code tableName} is not a name DynamoDB accepts */
    public static TableBootstrap of(DynamoDbClient client, String tableName) {
        return new TableBootstrap(client, tableName, DEFAULT_TIMEOUT);
    }

    /**
     * The same bootstrap, each of whose operations takes at most {@code timeout} in all, SDK retries and the wait
     * for a table being created included (default {@link #DEFAULT_TIMEOUT}): an endpoint that never answers fails
     * the start-up then, not after the SDK's retries of its socket timeouts (minutes).
     *
     * @throws LockOptionException if {@code timeout} is null, zero or negative
     */
    public TableBootstrap timeout(Duration timeout) {
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new LockOptionException("timeout", timeout, "The table bootstrap's timeout " + timeout
                    + " must be positive, e.g. 30s");
        }
        return new TableBootstrap(client, tableName, timeout);
    }

    /**
     * What is known of the table.
     *
     * @param exists     whether the table exists
     * @param problems   what makes it unusable (wrong keys; a table deleting, archived or whose KMS key is out of
     *                   reach), empty when usable
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
     * @throws LockTableUnavailableException if the table is there but serves no request (archived, its KMS key out
     *                                       of reach)
     */
    public Status createIfMissing() {
        long deadline = System.nanoTime() + timeout.toNanos();
        // Looked at first: a role that may not create tables still starts on a table that is there.
        while (true) {
            TableStatus seen = statusOrMissing(deadline);
            if (seen == null) {
                if (create(deadline)) {
                    continue; // look at it at once: an on-demand table is often active already
                }
            }
            else if (seen != TableStatus.CREATING && seen != TableStatus.DELETING) {
                break; // ACTIVE, or UPDATING (its class or indexes changing), which serves reads and writes
            }
            // Being created or deleted, by another instance or an operator, or created and not visible yet
            // (DescribeTable is eventually consistent right after CreateTable): look again.
            pauseBeforeNextLook(deadline, seen);
        }
        Status status = check(deadline);
        if (!status.usable()) {
            return verify(deadline); // throws: a table that is not ours to use is left as it is, TTL included
        }
        if (!status.ttlEnabled()) {
            String other = ttlOnOtherAttribute(deadline);
            if (other != null) {
                throw new LockTableException(ttlElsewhere(other) + "; give dynamolock a table of its own"
                        + " (createIfMissing creates it), or enable TTL on '" + TableShape.TTL_ATTRIBUTE
                        + "' in place of '" + other + "' if nothing else relies on it");
            }
            enableTtl(deadline);
        }
        return verify(deadline);
    }

    /** The table's status, {@code null} if DynamoDB does not know it (yet). */
    private TableStatus statusOrMissing(long deadline) {
        try {
            return describe(deadline).tableStatus();
        }
        catch (ResourceNotFoundException ex) {
            return null;
        }
    }

    /**
     * Sends CreateTable; {@code true} if it is worth looking at the table at once (created now, or refused for
     * the account's limit of table operations after a pause), {@code false} if another instance created it and
     * it is not visible yet.
     */
    private boolean create(long deadline) {
        try {
            call("CreateTable", deadline, bounded -> client.createTable(b -> b.tableName(tableName)
                    .billingMode(BillingMode.PAY_PER_REQUEST)
                    .attributeDefinitions(stringAttribute(TableShape.PARTITION_KEY),
                            stringAttribute(TableShape.SORT_KEY))
                    .keySchema(key(TableShape.PARTITION_KEY, KeyType.HASH), key(TableShape.SORT_KEY, KeyType.RANGE))
                    .overrideConfiguration(bounded)));
            log.info("Created lock table '{}'", tableName);
            return true;
        }
        catch (ResourceInUseException ex) {
            log.debug("Lock table '{}' is being created by another instance", tableName);
            return false;
        }
        catch (LimitExceededException ex) {
            // Too many table operations in the account at once (services scaling out together): not retried by
            // the SDK. Look again, as another instance may have created it meanwhile.
            pause("CreateTable", deadline, ex);
            return true;
        }
    }

    /** Sleeps until the next look, or says why not if the time is up. */
    private void pauseBeforeNextLook(long deadline, TableStatus seen) {
        long left = deadline - System.nanoTime();
        if (left < LAST_LOOK.toNanos()) { // the next look would have no time to be answered
            throw new LockTableNotReadyException("Lock table '" + tableName + "'" + where() + " is still "
                    + (seen == null ? "not visible after it was created" : seen) + " after " + timeout
                    + "; start again once it is ACTIVE, or give start-up more time");
        }
        sleep(Math.min(CREATING_POLL.toNanos(), left - LAST_LOOK.toNanos()));
    }

    /** After {@code refused}: a pause before trying again, or why not if the time is up. */
    private void pause(String operation, long deadline, DynamoDbException refused) {
        long left = deadline - System.nanoTime();
        if (left < LAST_LOOK.toNanos()) { // the next try would have no time to be answered
            throw new LockTableNotReadyException("DynamoDB refused " + operation + " of lock table '" + tableName + "'"
                    + where() + " for the account's limit of table operations at once (" + refused.getMessage()
                    + ") until the timeout " + timeout + " ran out; start again once fewer tables are being created"
                    + " or changed, or give start-up more time", refused);
        }
        log.info("{} of lock table '{}' was refused for now ({}); trying again", operation, tableName,
                refused.getMessage());
        sleep(Math.min(left - LAST_LOOK.toNanos(), ThreadLocalRandom.current().nextLong(500_000_000L, 2_000_000_000L)));
    }

    private static void sleep(long nanos) {
        try {
            TimeUnit.NANOSECONDS.sleep(Math.max(0, nanos));
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new LockTableException("Interrupted while waiting for the lock table", ex);
        }
    }

    private TableDescription describe(long deadline) {
        return call("DescribeTable", deadline,
                bounded -> client.describeTable(b -> b.tableName(tableName).overrideConfiguration(bounded))).table();
    }

    /**
     * {@code request}, bounded by what is left until {@code deadline}; a refusal for want of a permission becomes
     * a {@link LockTableAccessDeniedException} naming the table and the action.
     */
    private <T> T call(String operation, long deadline,
            Function<Consumer<AwsRequestOverrideConfiguration.Builder>, T> request) {
        Duration left = Duration.ofNanos(Math.max(1_000_000, deadline - System.nanoTime()));
        try {
            return request.apply(bounded -> bounded.apiCallTimeout(left));
        }
        catch (DynamoDbException ex) {
            String code = ex.awsErrorDetails() == null ? null : ex.awsErrorDetails().errorCode();
            if ("AccessDeniedException".equals(code)) {
                String action = "dynamodb:" + operation;
                String said = ex.awsErrorDetails().errorMessage() != null ? ex.awsErrorDetails().errorMessage()
                        : ex.getMessage();
                throw new LockTableAccessDeniedException("DynamoDB refused " + action + " on lock table '" + tableName
                        + "'" + where() + ": " + said, action, ex);
            }
            throw ex;
        }
    }

    /**
     * Where the table was looked for: DynamoDB's region, and the endpoint if the client names one, without the
     * credentials an endpoint may carry.
     */
    private String where() {
        try {
            var configuration = client.serviceClientConfiguration();
            return " (region " + configuration.region()
                    + configuration.endpointOverride().map(endpoint -> ", endpoint " + Printable.endpoint(endpoint))
                            .orElse("") + ")";
        }
        catch (RuntimeException unknown) {
            return ""; // a client that does not tell (a test double)
        }
    }

    /** The attribute TTL is on (enabled or being enabled), if not ours; {@code null} otherwise. */
    private String ttlOnOtherAttribute(long deadline) {
        var ttl = describeTtl(deadline);
        boolean on = ttl != null && (ttl.timeToLiveStatus() == TimeToLiveStatus.ENABLED
                || ttl.timeToLiveStatus() == TimeToLiveStatus.ENABLING);
        return on && !TableShape.TTL_ATTRIBUTE.equals(ttl.attributeName()) ? ttl.attributeName() : null;
    }

    private String ttlElsewhere(String other) {
        return "Lock table '" + tableName + "' has TTL on '" + other + "', and a table has one TTL attribute:"
                + " dynamolock needs it on '" + TableShape.TTL_ATTRIBUTE + "', or the items of idle locks stay in"
                + " the table";
    }

    private void enableTtl(long deadline) {
        while (true) {
            try {
                call("UpdateTimeToLive", deadline, bounded -> client.updateTimeToLive(b -> b.tableName(tableName)
                        .timeToLiveSpecification(s -> s.attributeName(TableShape.TTL_ATTRIBUTE).enabled(true))
                        .overrideConfiguration(bounded)));
                log.info("Enabled TTL on '{}' of lock table '{}'", TableShape.TTL_ATTRIBUTE, tableName);
                return;
            }
            catch (LimitExceededException ex) {
                pause("UpdateTimeToLive", deadline, ex);
                if (check(deadline).ttlEnabled()) {
                    return; // another instance got through meanwhile
                }
            }
            catch (LockTableAccessDeniedException ex) {
                throw ex;
            }
            catch (DynamoDbException ex) {
                // Another instance enabled it between our check and our request ("TimeToLive is already enabled"),
                // or is enabling it now ("already being updated"): done either way if TTL is on our attribute.
                if (!isValidationError(ex) || !check(deadline).ttlEnabled()) {
                    throw ex;
                }
                log.debug("TTL of lock table '{}' was enabled by another instance", tableName);
                return;
            }
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
     * @throws LockTableUnavailableException if it is there but serves no request (being deleted, archived, its KMS
     *                                       key out of reach)
     */
    public Status verify() {
        long deadline = System.nanoTime() + timeout.toNanos();
        // Being created (by the stack that deploys the service, say): waited for, as createIfMissing waits.
        Look look = look(deadline);
        while (look.tableStatus() == TableStatus.CREATING) {
            pauseBeforeNextLook(deadline, TableStatus.CREATING);
            look = look(deadline);
        }
        return verify(look, deadline);
    }

    private Status verify(long deadline) {
        return verify(look(deadline), deadline);
    }

    private Status verify(Look look, long deadline) {
        Status status = look.status();
        if (!status.exists()) {
            throw new LockTableException("Lock table '" + tableName + "' does not exist" + where() + ". Create it"
                    + " with " + TableShape.DESCRIPTION + " (TableBootstrap.createIfMissing() does), or check the"
                    + " region if it is elsewhere");
        }
        if (look.unavailable() != null) {
            // Its own exception: creating the table cannot help, nor more time; only its fix can.
            Unavailable unavailable = look.unavailable();
            throw new LockTableUnavailableException("Lock table '" + tableName + "'" + where() + " cannot serve"
                    + " locks now: " + unavailable.problem(), unavailable.status().toString(), unavailable.fix());
        }
        if (!status.problems().isEmpty()) {
            throw new LockTableException("Lock table '" + tableName + "' cannot hold locks: "
                    + String.join("; ", status.problems()) + ". Expected " + TableShape.DESCRIPTION
                    + "; point dynamolock at another table or recreate this one");
        }
        if (!status.ttlEnabled()) {
            String other = ttlOnOtherAttribute(deadline);
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
        return check(System.nanoTime() + timeout.toNanos());
    }

    private Status check(long deadline) {
        return look(deadline).status();
    }

    /**
     * What one look at the table found: its status as dynamolock judges it, and as DynamoDB states it; why it serves
     * no request, if it does not.
     */
    private record Look(Status status, TableStatus tableStatus, Unavailable unavailable) {
    }

    /** A table that is there but serves no request while in {@code status}, and what mends that. */
    private record Unavailable(TableStatus status, String fix) {

        /** As {@link Status#problems()} states it. */
        String problem() {
            return UNAVAILABLE + status + ": " + fix;
        }
    }

    private Look look(long deadline) {
        TableDescription table;
        try {
            table = describe(deadline);
        }
        catch (ResourceNotFoundException ex) {
            return new Look(new Status(false, List.of("table does not exist"), false), null, null);
        }
        Unavailable unavailable = unavailable(table);
        if (unavailable != null) {
            // Its keys do not matter yet: nothing can be read or written until this is mended.
            return new Look(new Status(true, List.of(unavailable.problem()), false), table.tableStatus(), unavailable);
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
        var ttl = describeTtl(deadline);
        boolean ttlEnabled = ttl != null && TableShape.TTL_ATTRIBUTE.equals(ttl.attributeName())
                && (ttl.timeToLiveStatus() == TimeToLiveStatus.ENABLED || ttl.timeToLiveStatus() == TimeToLiveStatus.ENABLING);
        return new Look(new Status(true, problems, ttlEnabled), table.tableStatus(), null);
    }

    /**
     * Why a table that is there serves no request now, with the fix; {@code null} if it does (ACTIVE, or UPDATING:
     * its class or indexes changing).
     */
    private static Unavailable unavailable(TableDescription table) {
        TableStatus status = table.tableStatus();
        if (status == null || status == TableStatus.ACTIVE || status == TableStatus.UPDATING
                || status == TableStatus.UNKNOWN_TO_SDK_VERSION) {
            return null;
        }
        String fix = switch (status) {
            case CREATING -> "wait until it is ACTIVE";
            case DELETING -> "point dynamolock at another table, or create this one again once it is gone";
            case INACCESSIBLE_ENCRYPTION_CREDENTIALS -> "enable its KMS key"
                    + (table.sseDescription() != null && table.sseDescription().kmsMasterKeyArn() != null
                            ? " " + table.sseDescription().kmsMasterKeyArn() : "")
                    + " or give DynamoDB access to it again; after seven days without it the table is archived";
            case ARCHIVING, ARCHIVED -> "it was archived after its KMS key was out of reach for seven days: restore"
                    + " it from its archival backup, or point dynamolock at another table";
            default -> "wait until it is ACTIVE";
        };
        return new Unavailable(status, fix);
    }

    private TimeToLiveDescription describeTtl(long deadline) {
        return call("DescribeTimeToLive", deadline, bounded -> client.describeTimeToLive(b -> b.tableName(tableName)
                .overrideConfiguration(bounded))).timeToLiveDescription();
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
