package io.dynamolock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dynamolock.core.test.AccessDenied;
import io.dynamolock.core.test.DynamoDbLocal;
import io.dynamolock.core.test.PausingInterceptor;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntPredicate;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.SdkResponse;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.DescribeTableResponse;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.DescribeTableRequest;
import software.amazon.awssdk.services.dynamodb.model.CreateTableResponse;
import software.amazon.awssdk.services.dynamodb.model.MultiRegionConsistency;
import software.amazon.awssdk.services.dynamodb.model.ReplicaDescription;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.LimitExceededException;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TableStatus;
import software.amazon.awssdk.services.dynamodb.model.TimeToLiveStatus;

class TableBootstrapTests {

    private final DynamoDbClient client = DynamoDbLocal.shared().client();
    private final String table = "bootstrap-" + UUID.randomUUID().toString().substring(0, 8);

    @AfterEach
    void tearDown() {
        client.close();
    }

    @Test
    void createsTheTableWithTtlAndIsIdempotent() {
        TableBootstrap.Status created = TableBootstrap.of(client, table).createIfMissing();
        assertThat(created.usable()).isTrue();
        assertThat(created.ttlEnabled()).isTrue();
        var description = client.describeTable(b -> b.tableName(table)).table();
        assertThat(description.billingModeSummary().billingMode()).isEqualTo(BillingMode.PAY_PER_REQUEST);
        assertThat(TableBootstrap.of(client, table).createIfMissing().usable()).isTrue();
    }

    /**
     * A role with the README's least-privilege policy (no CreateTable, no UpdateTimeToLive) and the table made by
     * Terraform: creating only what is missing needs neither.
     */
    @Test
    void createIfMissingOnATableThatIsThereNeedsNoPermissionToCreateOrToEnableTtl() {
        TableBootstrap.of(client, table).createIfMissing();
        try (DynamoDbClient leastPrivilege = DynamoDbLocal.shared().client(AccessDenied.to("CreateTable", "UpdateTimeToLive"))) {
            TableBootstrap.Status status = TableBootstrap.of(leastPrivilege, table).createIfMissing();
            assertThat(status.usable()).isTrue();
            assertThat(status.ttlEnabled()).isTrue();
        }
    }

    @Test
    void aRefusedPermissionIsNamedWithTheTable() {
        TableBootstrap.of(client, table).createIfMissing();
        try (DynamoDbClient withoutTtlLook = DynamoDbLocal.shared().client(AccessDenied.to("DescribeTimeToLive"))) {
            assertThatThrownBy(() -> TableBootstrap.of(withoutTtlLook, table).verify())
                    .isInstanceOf(LockTableAccessDeniedException.class)
                    .hasMessageContaining("DynamoDB refused dynamodb:DescribeTimeToLive on lock table '" + table + "'")
                    .hasMessageContaining("is not authorized to perform: dynamodb:DescribeTimeToLive")
                    .extracting(ex -> ((LockTableAccessDeniedException) ex).action())
                    .isEqualTo("dynamodb:DescribeTimeToLive");
        }
    }

    /**
     * Too many table operations in the account at once (services scaling out together): DynamoDB answers
     * LimitExceededException, which the SDK does not retry; the bootstrap tries again.
     */
    @Test
    void aCreateTableRefusedOnceForTheAccountsLimitOfTableOperationsIsTriedAgain() {
        AtomicBoolean refuseNext = new AtomicBoolean(true);
        try (DynamoDbClient limited = DynamoDbLocal.shared().client(
                refusing(request -> request instanceof CreateTableRequest && refuseNext.compareAndSet(true, false)))) {
            assertThat(TableBootstrap.of(limited, table).createIfMissing().usable()).isTrue();
            assertThat(refuseNext.get()).as("the first CreateTable was refused").isFalse();
        }
    }

    private static ExecutionInterceptor refusing(Class<?> request) {
        return refusing(request::isInstance);
    }

    /** Answers the requests {@code refused} picks with LimitExceededException, as DynamoDB does for the account's limit. */
    private static ExecutionInterceptor refusing(Predicate<Object> refused) {
        return new ExecutionInterceptor() {
            @Override
            public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
                if (refused.test(context.request())) {
                    String message = "Subscriber limit exceeded: Only 500 tables can be created, updated, or deleted"
                            + " simultaneously";
                    throw LimitExceededException.builder().statusCode(400).message(message)
                            .awsErrorDetails(AwsErrorDetails.builder().errorCode("LimitExceededException")
                                    .errorMessage(message).build()).build();
                }
            }
        };
    }

    /** Refused for the account's limit until the time is up: the bootstrap says so, and what to do. */
    @Test
    void aCreateTableRefusedForTheAccountsLimitUntilTheTimeoutSaysSo() {
        try (DynamoDbClient limited = DynamoDbLocal.shared().client(refusing(CreateTableRequest.class))) {
            assertThatThrownBy(() -> TableBootstrap.of(limited, table).timeout(Duration.ofSeconds(2)).createIfMissing())
                    .isInstanceOf(LockTableNotReadyException.class)
                    .hasMessageContaining("DynamoDB refused CreateTable of lock table '" + table + "'")
                    .hasMessageContaining("Only 500 tables")
                    .hasMessageContaining("until the timeout PT2S ran out")
                    .hasCauseInstanceOf(LimitExceededException.class);
        }
    }

    /** A table whose class or indexes are being changed serves reads and writes: nothing to wait for. */
    @Test
    void aTableBeingUpdatedIsUsedAsItIsWithoutWaitingForItToBeActive() {
        TableBootstrap.of(client, table).createIfMissing();
        ExecutionInterceptor updating = describedAs(TableStatus.UPDATING, look -> true);
        try (DynamoDbClient seesUpdating = DynamoDbLocal.shared().client(updating)) {
            // With a wait for ACTIVE (up to the timeout), this would fail with the table still not active.
            assertThat(TableBootstrap.of(seesUpdating, table).timeout(Duration.ofSeconds(3)).createIfMissing()
                    .usable()).isTrue();
        }
    }

    /**
     * AWS: right after CreateTable, DescribeTable may answer ResourceNotFoundException (eventually consistent);
     * the bootstrap looks again, as the SDK's waiter it replaced did.
     */
    @Test
    void aDescribeTableRightAfterCreateTableThatDoesNotSeeTheTableYetIsLookedAtAgain() {
        AtomicBoolean created = new AtomicBoolean();
        AtomicBoolean notYetSeen = new AtomicBoolean(true);
        ExecutionInterceptor eventuallyConsistent = new ExecutionInterceptor() {
            @Override
            public void afterExecution(Context.AfterExecution context, ExecutionAttributes attributes) {
                if (context.response() instanceof CreateTableResponse) {
                    created.set(true);
                }
            }

            @Override
            public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
                if (context.request() instanceof DescribeTableRequest && created.get()
                        && notYetSeen.compareAndSet(true, false)) {
                    String message = "Requested resource not found: Table: " + table + " not found";
                    throw ResourceNotFoundException.builder().statusCode(400).message(message)
                            .awsErrorDetails(AwsErrorDetails.builder().errorCode("ResourceNotFoundException")
                                    .errorMessage(message).build()).build();
                }
            }
        };
        try (DynamoDbClient client = DynamoDbLocal.shared().client(eventuallyConsistent)) {
            assertThat(TableBootstrap.of(client, table).createIfMissing().usable()).isTrue();
        }
        assertThat(notYetSeen).as("a look after the creation did not see the table").isFalse();
    }

    /** A table that stays CREATING past the timeout: the bootstrap says so, not a request's 1 ms time-out. */
    @Test
    void aTableStillBeingCreatedAtTheTimeoutIsReportedAsSuch() {
        try (DynamoDbClient admin = DynamoDbLocal.shared().client()) {
            TableBootstrap.of(admin, table).createIfMissing();
        }
        ExecutionInterceptor creating = describedAs(TableStatus.CREATING, look -> true);
        try (DynamoDbClient client = DynamoDbLocal.shared().client(creating)) {
            assertThatThrownBy(() -> TableBootstrap.of(client, table).timeout(Duration.ofSeconds(3)).createIfMissing())
                    .isInstanceOf(LockTableNotReadyException.class).hasMessageContaining("is still CREATING after PT3S");
        }
    }
    /** Found being deleted (a CI job recreating it), then gone: created again, not awaited as being created. */
    @Test
    void aTableFoundBeingDeletedIsCreatedAgainOnceItIsGone() {
        TableBootstrap.of(client, table).createIfMissing();
        AtomicBoolean first = new AtomicBoolean(true);
        ExecutionInterceptor deleting = new ExecutionInterceptor() {
            @Override
            public SdkResponse modifyResponse(Context.ModifyResponse context, ExecutionAttributes attributes) {
                if (context.response() instanceof DescribeTableResponse described && first.compareAndSet(true, false)) {
                    client.deleteTable(b -> b.tableName(table)); // the deletion is done when the answer arrives
                    return described.toBuilder().table(described.table().toBuilder()
                            .tableStatus(TableStatus.DELETING).build()).build();
                }
                return context.response();
            }
        };
        try (DynamoDbClient starting = DynamoDbLocal.shared().client(deleting)) {
            assertThat(TableBootstrap.of(starting, table).timeout(Duration.ofSeconds(10)).createIfMissing().usable())
                    .isTrue();
        }
    }

    /** A short timeout still leaves a table seen CREATING once the time to be looked at again. */
    @Test
    void aTableSeenCreatingOnceWithinAShortTimeoutIsLookedAtAgain() {
        TableBootstrap.of(client, table).createIfMissing();
        ExecutionInterceptor creatingOnce = describedAs(TableStatus.CREATING, look -> look == 1);
        try (DynamoDbClient starting = DynamoDbLocal.shared().client(creatingOnce)) {
            assertThat(TableBootstrap.of(starting, table).timeout(Duration.ofMillis(2500)).createIfMissing().usable())
                    .isTrue();
        }
    }

    /**
     * A table that is there but cannot serve locks (being deleted, archived, its KMS key out of reach) is no usable
     * table: check() (what the health indicator asks) says why, and verify() and createIfMissing() refuse it.
     */
    @ParameterizedTest
    @EnumSource(value = TableStatus.class, names = {"DELETING", "ARCHIVING", "ARCHIVED",
            "INACCESSIBLE_ENCRYPTION_CREDENTIALS"})
    void aTableThatCannotServeLocksIsNoUsableTable(TableStatus status) {
        TableBootstrap.of(client, table).createIfMissing();
        try (DynamoDbClient seen = DynamoDbLocal.shared().client(describedAs(status, look -> true))) {
            TableBootstrap bootstrap = TableBootstrap.of(seen, table).timeout(Duration.ofSeconds(3));
            assertThat(bootstrap.check().usable()).as("check() of a table " + status).isFalse();
            assertThat(bootstrap.check().problems()).singleElement().asString().contains(status.toString());
            assertThatThrownBy(bootstrap::verify).isInstanceOfSatisfying(LockTableUnavailableException.class,
                    unavailable -> assertUnavailable(unavailable, status)).hasMessageContaining(table);
            if (status != TableStatus.DELETING) { // createIfMissing waits for a deletion, to create it again
                assertThatThrownBy(bootstrap::createIfMissing).isInstanceOfSatisfying(
                        LockTableUnavailableException.class, unavailable -> assertUnavailable(unavailable, status));
            }
        }
    }

    /** A refusal of a table that serves no request names its status and its own fix, which the message states. */
    private static void assertUnavailable(LockTableUnavailableException unavailable, TableStatus status) {
        assertThat(unavailable.tableStatus()).isEqualTo(status.toString());
        assertThat(unavailable.fix()).isNotBlank().doesNotContain("create-table");
        assertThat(unavailable.getMessage()).contains(status.toString()).contains(unavailable.fix());
    }

    /** A table still being created (by the stack that deploys the service, say) is waited for by verify() too. */
    @Test
    void verifyWaitsForATableBeingCreated() {
        TableBootstrap.of(client, table).createIfMissing();
        try (DynamoDbClient starting = DynamoDbLocal.shared().client(describedAs(TableStatus.CREATING, look -> true))) {
            TableBootstrap bootstrap = TableBootstrap.of(starting, table).timeout(Duration.ofSeconds(3));
            assertThat(bootstrap.check().problems()).singleElement().asString().contains("CREATING");
            assertThatThrownBy(bootstrap::verify).isInstanceOf(LockTableNotReadyException.class)
                    .hasMessageContaining("is still CREATING after PT3S");
        }
        try (DynamoDbClient starting = DynamoDbLocal.shared().client(describedAs(TableStatus.CREATING,
                look -> look == 1))) {
            assertThat(TableBootstrap.of(starting, table).timeout(Duration.ofMillis(2500)).verify().usable())
                    .isTrue();
        }
    }

    /** Answers DescribeTable with {@code status} on the looks {@code onLook} picks (counted from 1). */
    private static ExecutionInterceptor describedAs(TableStatus status, IntPredicate onLook) {
        AtomicInteger looks = new AtomicInteger();
        return new ExecutionInterceptor() {
            @Override
            public SdkResponse modifyResponse(Context.ModifyResponse context, ExecutionAttributes attributes) {
                if (context.response() instanceof DescribeTableResponse described
                        && onLook.test(looks.incrementAndGet())) {
                    return described.toBuilder().table(described.table().toBuilder().tableStatus(status).build())
                            .build();
                }
                return context.response();
            }
        };
    }

    /** An endpoint that takes connections and never answers (a stalled proxy): the timeout bounds it all. */
    @Test
    void anEndpointThatNeverAnswersFailsWithinTheTimeout() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
                DynamoDbClient unanswered = DynamoDbClient.builder()
                        .endpointOverride(URI.create("http://127.0.0.1:" + silent.getLocalPort()))
                        .region(Region.US_EAST_1)
                        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")))
                        .build()) {
            assertThatThrownBy(() -> TableBootstrap.of(unanswered, table).timeout(Duration.ofSeconds(2)).verify())
                    .as("the SDK's own retries of a read timeout take minutes").isInstanceOf(ApiCallTimeoutException.class)
                    .hasMessageContaining("did not complete before the specified timeout configuration");
        }
    }

    @Test
    void verifyNamesAMissingTableAndWhereItWasLookedFor() {
        assertThat(TableBootstrap.of(client, table).check().exists()).isFalse();
        assertThatThrownBy(() -> TableBootstrap.of(client, table).verify())
                .isInstanceOf(LockTableException.class)
                .hasMessageContaining("'" + table + "' does not exist (region us-east-1, endpoint http://")
                .hasMessageContaining("TableBootstrap.createIfMissing()").hasMessageContaining("check the region");
    }

    /** An endpoint may carry a user and password, or a token in its query: messages name it without them. */
    @Test
    void aMissingTableIsNamedWithItsEndpointWithoutTheCredentialsInIt() {
        URI local = client.serviceClientConfiguration().endpointOverride().orElseThrow();
        try (DynamoDbClient withUser = DynamoDbClient.builder()
                .endpointOverride(URI.create("http://lock-user:s3cr3t-pw@127.0.0.1:" + local.getPort() + "/?token=t0k"))
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")))
                .build()) {
            assertThatThrownBy(() -> TableBootstrap.of(withUser, table).verify())
                    .isInstanceOf(LockTableException.class)
                    .hasMessageContaining("endpoint http://***@127.0.0.1:" + local.getPort() + "/?***)")
                    .message().doesNotContain("lock-user").doesNotContain("s3cr3t").doesNotContain("t0k");
        }
    }

    @Test
    void verifyNamesAWrongKeySchema() {
        client.createTable(b -> b.tableName(table).billingMode(BillingMode.PAY_PER_REQUEST)
                .attributeDefinitions(a -> a.attributeName("id").attributeType(ScalarAttributeType.S))
                .keySchema(k -> k.attributeName("id").keyType(KeyType.HASH)));
        assertThatThrownBy(() -> TableBootstrap.of(client, table).verify())
                .isInstanceOf(LockTableException.class)
                .hasMessageContaining("no partition key 'pk' of type S (has [id HASH S])")
                .hasMessageContaining("no sort key 'sk'")
                .hasMessageContaining("Expected partition key 'pk' (S), sort key 'sk' (S)");
    }

    @Test
    void createIfMissingRefusesATableWithWrongKeysWithoutTurningItsTtlOn() {
        // An application's own table, named by mistake.
        client.createTable(b -> b.tableName(table).billingMode(BillingMode.PAY_PER_REQUEST)
                .attributeDefinitions(a -> a.attributeName("orderId").attributeType(ScalarAttributeType.S))
                .keySchema(k -> k.attributeName("orderId").keyType(KeyType.HASH)));
        assertThatThrownBy(() -> TableBootstrap.of(client, table).createIfMissing())
                .isInstanceOf(LockTableException.class).hasMessageContaining("no partition key 'pk'");
        assertThat(client.describeTimeToLive(b -> b.tableName(table)).timeToLiveDescription().timeToLiveStatus())
                .isEqualTo(TimeToLiveStatus.DISABLED);
    }

    @Test
    void createIfMissingRefusesATableWhoseTtlIsOnAnotherAttributeNamingIt() {
        createKeyedTable();
        client.updateTimeToLive(b -> b.tableName(table).timeToLiveSpecification(s -> s.attributeName("ttl")
                .enabled(true)));
        assertThatThrownBy(() -> TableBootstrap.of(client, table).createIfMissing())
                .isInstanceOf(LockTableException.class).hasMessageContaining("has TTL on 'ttl'")
                .hasMessageContaining("'expiresAt'").hasMessageContaining("a table of its own");
        assertThat(TableBootstrap.of(client, table).verify().ttlEnabled()).as("verify only reports it").isFalse();
    }

    private void createKeyedTable() {
        client.createTable(b -> b.tableName(table).billingMode(BillingMode.PAY_PER_REQUEST)
                .attributeDefinitions(a -> a.attributeName("pk").attributeType(ScalarAttributeType.S),
                        a -> a.attributeName("sk").attributeType(ScalarAttributeType.S))
                .keySchema(k -> k.attributeName("pk").keyType(KeyType.HASH), k -> k.attributeName("sk").keyType(KeyType.RANGE)));
    }

    @Test
    void verifyAcceptsATableWithoutTtlButReportsIt() {
        createKeyedTable();
        TableBootstrap.Status status = TableBootstrap.of(client, table).verify();
        assertThat(status.usable()).isTrue();
        assertThat(status.ttlEnabled()).isFalse();
    }

    @Test
    void instancesBootstrappingTheSameTableAtOnceAllStart() throws Exception {
        // Forced interleaving: A has seen TTL disabled and is about to enable it when B enables it first.
        PausingInterceptor holdEnableTtl = new PausingInterceptor("UpdateTimeToLive", PausingInterceptor.Point.BEFORE_SEND).arm();
        CountDownLatch bEnabledTtl = new CountDownLatch(1);
        ExecutionInterceptor afterEnable = new ExecutionInterceptor() {
            @Override
            public void afterExecution(Context.AfterExecution context, ExecutionAttributes attributes) {
                if ("UpdateTimeToLive".equals(attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME))) {
                    bEnabledTtl.countDown();
                }
            }
        };
        ExecutorService instances = Executors.newFixedThreadPool(3);
        try (DynamoDbClient a = DynamoDbLocal.shared().client(holdEnableTtl);
                DynamoDbClient b = DynamoDbLocal.shared().client(afterEnable);
                DynamoDbClient c = DynamoDbLocal.shared().client()) {
            Future<TableBootstrap.Status> first = instances.submit(() -> TableBootstrap.of(a, table).createIfMissing());
            holdEnableTtl.awaitPaused();
            Future<TableBootstrap.Status> second = instances.submit(() -> TableBootstrap.of(b, table).createIfMissing());
            assertThat(bEnabledTtl.await(30, TimeUnit.SECONDS)).isTrue();
            holdEnableTtl.resume();
            Future<TableBootstrap.Status> third = instances.submit(() -> TableBootstrap.of(c, table).createIfMissing());

            for (Future<TableBootstrap.Status> instance : List.of(first, second, third)) {
                TableBootstrap.Status status = instance.get(60, TimeUnit.SECONDS);
                assertThat(status.usable()).isTrue();
                assertThat(status.ttlEnabled()).isTrue();
            }
        }
        finally {
            instances.shutdownNow();
        }
    }

    @Test
    void refusesAGlobalTableWithEventuallyConsistentReplicas() {
        TableBootstrap.of(client, table).createIfMissing();
        try (DynamoDbClient replicated = DynamoDbLocal.shared().client(replicas(MultiRegionConsistency.EVENTUAL))) {
            assertThatThrownBy(() -> TableBootstrap.of(replicated, table).verify())
                    .isInstanceOf(LockTableException.class)
                    .hasMessageContaining("'" + table + "'")
                    .hasMessageContaining("eu-west-1")
                    .hasMessageContaining("multi-region strong consistency");
            assertThat(TableBootstrap.of(replicated, table).check().usable()).isFalse();
        }
    }

    @Test
    void acceptsAGlobalTableWithStrongMultiRegionConsistency() {
        TableBootstrap.of(client, table).createIfMissing();
        try (DynamoDbClient replicated = DynamoDbLocal.shared().client(replicas(MultiRegionConsistency.STRONG))) {
            assertThat(TableBootstrap.of(replicated, table).verify().usable()).isTrue();
        }
    }

    /** DynamoDB Local has no replicas: DescribeTable answers as a global table's would. */
    private static ExecutionInterceptor replicas(MultiRegionConsistency consistency) {
        return new ExecutionInterceptor() {
            @Override
            public SdkResponse modifyResponse(Context.ModifyResponse context, ExecutionAttributes attributes) {
                if (context.response() instanceof DescribeTableResponse described) {
                    return described.toBuilder().table(described.table().toBuilder()
                            .replicas(ReplicaDescription.builder().regionName("eu-west-1").build(),
                                    ReplicaDescription.builder().regionName("us-east-1").build())
                            .multiRegionConsistency(consistency).build()).build();
                }
                return context.response();
            }
        };
    }
}
