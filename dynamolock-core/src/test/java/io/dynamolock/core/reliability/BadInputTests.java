package io.dynamolock.core.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.dynamolock.core.LockAttempt;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockListener;
import io.dynamolock.core.LockQueueFullException;
import io.dynamolock.core.LockLostException;
import io.dynamolock.core.LockOptionException;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTableException;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.LockWaitTimeoutException;
import io.dynamolock.core.TableBootstrap;
import io.dynamolock.core.test.FaultInjector;
import io.dynamolock.core.test.FaultInjector.Fault;
import io.dynamolock.core.test.FaultInjector.Step;
import io.dynamolock.core.test.LockItems;
import io.dynamolock.core.test.RequestCounter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;

/**
 * Bad input and misuse of the core API: each gets an error that names the value and the
 * fix, sends no request where the input alone is wrong, and leaves nothing in the table.
 * Odd but legal names (unicode, '#', '/', spaces, control characters) work as locks.
 * (The Spring layer's misuse - annotations, property parsing, credentials - is tested there.)
 */
class BadInputTests extends LockTableTestSupport {

    final RequestCounter requests = new RequestCounter();
    DynamoDbClient counted;
    LockTemplate locks;
    LockTemplate other;

    @BeforeEach
    void templates() {
        counted = dynamo.client(requests);
        locks = builder().ownerName("bad-input").build();
        other = builder().ownerName("other").build();
    }

    @AfterEach
    void close() {
        locks.close();
        other.close();
        counted.close();
        assertThat(items.entriesInTable()).as("no entry left in the table").isZero();
    }

    LockTemplate.Builder builder() {
        return LockTemplate.builder(counted).tableName(table).leaseDuration(Duration.ofSeconds(2))
                .heartbeatInterval(Duration.ofMillis(500));
    }

    /** How messages write the blank names above: their control characters as \\uXXXX. */
    private static String escaped(String blank) {
        return blank.replace("\t", "\\u0009").replace("\n", "\\u000a").replace("\r", "\\u000d");
    }

    /** Asserts that {@code call} fails with an IllegalArgumentException mentioning every fragment, sending nothing. */
    void rejected(Runnable call, String... fragments) {
        requests.reset();
        assertThatThrownBy(call::run).isInstanceOf(IllegalArgumentException.class)
                .message().contains(fragments);
        assertThat(requests.total()).as("no request sent").isZero();
    }

    // ---- entity and namespace names ----------------------------------------------------------------------------

    @Test
    void nullEntityIsRejectedByEveryEntryPoint() {
        rejected(() -> locks.acquire(null, Duration.ZERO), "entity must not be null");
        rejected(() -> locks.acquire(LockRequest.of(null)), "entity must not be null");
        rejected(() -> locks.tryAcquire((String) null), "entity must not be null");
        rejected(() -> locks.execute((String) null, Duration.ZERO, () -> { }), "entity must not be null");
        rejected(() -> locks.acquire((LockRequest) null), "request must not be null");
        rejected(() -> locks.queue(null, null), "entity must not be null");
    }

    @Test
    void breakWithAMissingOrMalformedTicketOrKeyIsRejectedNamingTheValue() {
        rejected(() -> locks.breakLock("order-1", null, 0), "ticket 0 is not a ticket", "positive",
                "LockTemplate.queue");
        rejected(() -> locks.breakLock("order-1", null, -5), "ticket -5 is not a ticket");
        rejected(() -> locks.breakLock(null, null, 7), "entity must not be null");
        rejected(() -> locks.breakLock("a".repeat(2049), null, 7), "is 2049 bytes in UTF-8", "at most 2048 bytes");
        rejected(() -> locks.breakLock("order-1", "n".repeat(1025), 7), "namespace", "at most 1024 bytes");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "   ", "\t", "\n", " \t\r\n "})
    void blankEntityIsRejected(String entity) {
        rejected(() -> locks.acquire(entity, Duration.ZERO), "entity '" + escaped(entity) + "' must not be blank");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "\t"})
    void blankNamespaceIsRejected(String namespace) {
        rejected(() -> locks.acquire(LockRequest.builder("order-1").namespace(namespace).build()),
                "namespace '" + escaped(namespace) + "' must not be blank");
        assertThatThrownBy(() -> builder().defaultNamespace(namespace).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("defaultNamespace");
    }

    @Test
    void entityOverDynamoDbsPartitionKeyLimitIsRejectedAndOneAtTheLimitWorks() {
        rejected(() -> locks.acquire("a".repeat(2049), Duration.ZERO), "is 2049 bytes in UTF-8",
                "at most 2048 bytes", "shorter identifier");
        // Multi-byte characters count in bytes: 683 x 3 bytes = 2049.
        rejected(() -> locks.acquire("€".repeat(683), Duration.ZERO), "is 2049 bytes");

        String longest = "€".repeat(682) + "ab"; // 2048 bytes
        try (LockHandle lock = locks.acquire(longest, Duration.ZERO)) {
            assertThat(other.tryAcquire(longest)).isEmpty();
            assertThat(items.read(longest, "default").entries()).hasSize(1);
        }
    }

    @Test
    void namespaceOverDynamoDbsSortKeyLimitIsRejectedAndOneAtTheLimitWorks() {
        rejected(() -> locks.acquire(LockRequest.builder("order-1").namespace("n".repeat(1025)).build()),
                "namespace", "is 1025 bytes", "at most 1024 bytes");
        assertThatThrownBy(() -> builder().defaultNamespace("n".repeat(1025)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("defaultNamespace")
                .hasMessageContaining("1024");

        String longest = "n".repeat(1024);
        try (LockHandle lock = locks.acquire(LockRequest.builder("order-1").namespace(longest).wait(Duration.ZERO)
                .build())) {
            assertThat(items.read("order-1", longest).entries()).hasSize(1);
        }
    }

    @Test
    void invalidUnicodeIsRejected() {
        rejected(() -> locks.acquire("order-\uD800", Duration.ZERO), "not valid Unicode");
    }

    static Stream<String> oddNames() {
        return Stream.of("注文-42", "zählung", "🔒", "a#b", "#", "t#owner", "e#owner", "a/b", "/", "//x//",
                "order 42", " leading", "trailing ", "tab\there", "new\nline", "bell\u0007", "nul\u0000char",
                "next", "expiresAt", "pk", "default", "'quoted\"", "%s{}\\", "x".repeat(300));
    }

    @ParameterizedTest
    @MethodSource("oddNames")
    void oddEntityNamesWorkAsLocks(String entity) {
        try (LockHandle lock = locks.acquire(entity, Duration.ZERO)) {
            assertThat(lock.entity()).isEqualTo(entity);
            assertThat(other.tryAcquire(entity)).as("it is a real lock").isEmpty();
            LockItems.Item item = items.read(entity, "default");
            assertThat(item.entries()).hasSize(1);
            assertThat(locks.queue(entity, null).entries()).hasSize(1);
        }
        try (LockHandle next = other.acquire(entity, Duration.ZERO)) {
            assertThat(next.entity()).isEqualTo(entity);
        }
        assertThat(items.read(entity, "default").entries()).isEmpty();
    }

    /**
     * Entities, namespaces and owner names are the callers' text and table data: a line break in one must not
     * split a WARN into a second, forged line (an operator's break is an audit record).
     */
    @Test
    void lineBreaksInNamesDoNotSplitWarnings() {
        Logger logger = (Logger) LoggerFactory.getLogger("io.dynamolock");
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        logger.addAppender(appender);
        String entity = "order-1\n12:00:00.000 WARN forged\r";
        try (LockTemplate forger = builder().ownerName("owner\nforged").build()) {
            LockHandle lock = forger.acquire(LockRequest.builder(entity).namespace("ns\u2028x").wait(Duration.ZERO)
                    .build());
            other.breakLock(entity, "ns\u2028x", lock.fencingToken());
        }
        finally {
            logger.detachAppender(appender);
        }
        assertThat(appender.list).filteredOn(event -> event.getLevel() == Level.WARN)
                .extracting(ILoggingEvent::getFormattedMessage)
                .anyMatch(line -> line.contains("Broke") && line.contains("order-1\\u000a12:00:00.000 WARN forged"))
                .allSatisfy(line -> assertThat(line).doesNotContain("\n", "\r", "\u2028"));
    }

    /** An application that logs our exceptions' messages gets names it cannot be tricked by either. */
    @Test
    void messagesWriteLineBreaksInNamesEscaped() {
        String entity = "order\n26";
        try (LockTemplate holder = builder().ownerName("holder\r\nforged").build();
                LockTemplate full = builder().maxQueueLength(1).build();
                LockHandle held = holder.acquire(entity, Duration.ZERO)) {
            assertThatThrownBy(() -> locks.acquire(entity, Duration.ofMillis(200)))
                    .isInstanceOfSatisfying(LockWaitTimeoutException.class, timeout -> {
                        assertThat(timeout.entity()).as("the accessor gives it as given").isEqualTo(entity);
                        assertThat(timeout.ownersAhead()).containsExactly("holder\r\nforged");
                    })
                    .hasMessageContaining("entity='order\\u000a26'").hasMessageContaining("holder\\u000d\\u000aforged")
                    .message().doesNotContain("\n", "\r");
            assertThatThrownBy(() -> full.acquire(entity, Duration.ofMillis(200)))
                    .isInstanceOf(LockQueueFullException.class).hasMessageContaining("entity='order\\u000a26'")
                    .message().doesNotContain("\n");
        }
        assertThatThrownBy(() -> locks.acquire("\u2028", Duration.ZERO)).hasMessageContaining("'\\u2028'")
                .message().doesNotContain("\u2028");
    }

    @Test
    void messagesTellABackslashFromTheEscapeOfALineBreak() {
        assertThat(LockRequest.of("a\\u000ab").toString()).contains("entity=a\\u005cu000ab");
        assertThat(LockRequest.of("a\nb").toString()).contains("entity=a\\u000ab");
        try (LockHandle lock = locks.acquire(LockRequest.builder(List.of("a\nforged", "b")).wait(Duration.ZERO)
                .build())) {
            assertThatThrownBy(lock::fencingToken).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("entities [a\\u000aforged, b]");
        }
    }

    @ParameterizedTest
    @MethodSource("oddNames")
    void oddNamespacesWorkAsLocks(String namespace) {
        try (LockHandle lock = locks.acquire(LockRequest.builder("order-1").namespace(namespace).wait(Duration.ZERO)
                .build())) {
            assertThat(lock.namespace()).isEqualTo(namespace);
            assertThat(other.tryAcquire(LockRequest.builder("order-1").namespace(namespace).build())).isEmpty();
            assertThat(items.read("order-1", namespace).entries()).hasSize(1);
        }
    }

    static Stream<Arguments> lookalikeKeys() {
        return Stream.of(
                Arguments.of(List.of(new String[] {"a#b", "c"}, new String[] {"a", "b#c"}, new String[] {"a#b#c", "default"})),
                Arguments.of(List.of(new String[] {"a/b", "c"}, new String[] {"a", "b/c"}, new String[] {"a/b/c", "default"})),
                Arguments.of(List.of(new String[] {"a", "b c"}, new String[] {"a b", "c"}, new String[] {"a", "b"},
                        new String[] {"b", "a"})),
                Arguments.of(List.of(new String[] {"order-1", "default"}, new String[] {"order-1", "Default"},
                        new String[] {"order-1", "default "}, new String[] {"ORDER-1", "default"})));
    }

    @ParameterizedTest
    @MethodSource("lookalikeKeys")
    void lookalikeEntityNamespacePairsAreDistinctLocks(List<String[]> keys) {
        List<LockHandle> held = new ArrayList<>();
        try {
            for (String[] key : keys) {
                held.add(locks.acquire(LockRequest.builder(key[0]).namespace(key[1]).wait(Duration.ZERO).build()));
            }
            // All held at once: none of them is the same lock as another.
            for (String[] key : keys) {
                LockItems.Item item = items.read(key[0], key[1]);
                assertThat(item.entries()).as(key[0] + " / " + key[1]).hasSize(1);
            }
        }
        finally {
            held.forEach(LockHandle::release);
        }
    }

    // ---- waits and leases -------------------------------------------------------------------------------------

    @Test
    void negativeAndMissingWaitsAreRejectedWithTheFix() {
        rejected(() -> locks.acquire("order-1", Duration.ofMillis(-1)), "wait PT-0.001S is negative",
                "LockRequest.NO_WAIT", "LockRequest.WAIT_FOREVER");
        assertThatThrownBy(() -> locks.acquire("order-1", null)).hasMessageContaining("wait must not be null")
                .hasMessageContaining("NO_WAIT");
        assertThatThrownBy(() -> builder().defaultWait(Duration.ofSeconds(-5)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("defaultWait PT-5S is negative");
        assertThatThrownBy(() -> builder().defaultWait(null).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("defaultWait must not be null");
    }

    @Test
    void zeroTinyAndAbsurdWaitsMeanNoWaitAndForever() {
        try (LockHandle lock = locks.acquire("order-1", Duration.ZERO)) {
            assertThatThrownBy(() -> other.acquire("order-1", Duration.ZERO)).hasMessageContaining("Timed out");
            assertThatThrownBy(() -> other.acquire("order-1", Duration.ofNanos(1))).hasMessageContaining("Timed out");
        }
        for (Duration forever : List.of(LockRequest.WAIT_FOREVER, Duration.ofSeconds(Long.MAX_VALUE),
                Duration.ofDays(365L * 1000))) {
            locks.acquire("order-1", forever).release();
            try (LockTemplate template = builder().defaultWait(forever).build()) {
                template.acquire(LockRequest.of("order-1")).release();
            }
        }
    }

    @Test
    void zeroNegativeAndTooShortLeasesAreRejected() {
        for (Duration lease : List.of(Duration.ZERO, Duration.ofSeconds(-1))) {
            assertThatThrownBy(() -> builder().leaseDuration(lease).heartbeatInterval(null).build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("leaseDuration " + lease + " must be a positive duration");
            rejected(() -> locks.acquire(LockRequest.builder("order-1").lease(lease).build()), "lease " + lease,
                    "positive");
        }
        rejected(() -> locks.acquire(LockRequest.builder("order-1").lease(Duration.ofMillis(500)).build()),
                "lease PT0.5S must be longer than the heartbeat interval PT0.5S");
        assertThatThrownBy(() -> builder().leaseDuration(Duration.ofSeconds(1)).heartbeatInterval(Duration.ofSeconds(1))
                .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("longer than the heartbeat");
        assertThatThrownBy(() -> builder().heartbeatInterval(Duration.ZERO).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("heartbeatInterval PT0S");
        assertThatThrownBy(() -> LockRequest.builder("order-1").lease(null)).hasMessageContaining("lease must not be null");
    }

    @Test
    void absurdLeasesAreRejectedWithTheirValue() {
        for (Duration lease : List.of(Duration.ofSeconds(Long.MAX_VALUE), Duration.ofDays(365L * 1000))) {
            rejected(() -> locks.acquire(LockRequest.builder("order-1").lease(lease).wait(Duration.ZERO).build()),
                    "lease " + lease, "at most");
            assertThatThrownBy(() -> builder().leaseDuration(lease).heartbeatInterval(Duration.ofSeconds(30)).build())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leaseDuration " + lease)
                    .hasMessageContaining("at most");
        }
    }

    @Test
    void otherBadOptionsNameTheirValue() {
        assertThatThrownBy(() -> builder().tableName("ab").build()).hasMessageContaining("tableName 'ab'");
        assertThatThrownBy(() -> builder().tableName("bad name!").build()).hasMessageContaining("tableName 'bad name!'");
        assertThatThrownBy(() -> builder().ownerName(" ").build()).hasMessageContaining("ownerName ' '");
        assertThatThrownBy(() -> builder().ownerName("o".repeat(201)).build()).hasMessageContaining("1 to 200");
        assertThatThrownBy(() -> builder().pollInterval(Duration.ofSeconds(2), Duration.ofSeconds(1)).build())
                .hasMessageContaining("maxPollInterval PT1S is shorter than minPollInterval PT2S");
        assertThatThrownBy(() -> builder().pollInterval(Duration.ZERO, Duration.ofSeconds(1)).build())
                .hasMessageContaining("minPollInterval PT0S");
        assertThatThrownBy(() -> builder().maxQueueLength(0).build()).hasMessageContaining("maxQueueLength 0");
        // Past 292 years a pause overflows the wait loop's nanoseconds: every waiter failed with "long overflow".
        Duration ages = Duration.ofDays(110_000);
        assertThatThrownBy(() -> builder().pollInterval(ages, ages).build())
                .isInstanceOf(LockOptionException.class).hasMessageContaining("minPollInterval " + ages)
                .hasMessageContaining("at most");
        // A name with a line break must not forge a log line in the start-up report that shows it.
        assertThatThrownBy(() -> builder().tableName("locks\n12:00:00 ERROR forged").build())
                .message().doesNotContain("\n").contains("locks\\u000a12:00:00");
        assertThatThrownBy(() -> builder().clock(null).build()).hasMessageContaining("clock must not be null");
        assertThatThrownBy(() -> LockTemplate.builder(null)).hasMessageContaining("dynamoDbClient must not be null");
    }

    // ---- the table --------------------------------------------------------------------------------------------

    @Test
    void missingTableIsNamedWithTheFix() {
        try (LockTemplate missing = builder().tableName("no-such-table").build()) {
            for (Consumer<LockTemplate> call : List.<Consumer<LockTemplate>>of(t -> t.acquire("order-1", Duration.ZERO),
                    t -> t.tryAcquire("order-1"), t -> t.queue("order-1", null))) {
                assertThatThrownBy(() -> call.accept(missing)).isInstanceOf(LockTableException.class)
                        .hasMessageContaining("'no-such-table' does not exist").hasMessageContaining("TableBootstrap");
            }
            assertThat(missing.activeLocks()).isEmpty();
        }
        assertThatThrownBy(() -> TableBootstrap.of(client, "no-such-table").verify())
                .isInstanceOf(LockTableException.class).hasMessageContaining("does not exist")
                .hasMessageContaining("createIfMissing");
    }

    static Stream<Arguments> wrongTables() {
        return Stream.of(
                Arguments.of("other keys", List.of(key("id", ScalarAttributeType.S, KeyType.HASH))),
                Arguments.of("no sort key", List.of(key("pk", ScalarAttributeType.S, KeyType.HASH))),
                Arguments.of("numeric sort key", List.of(key("pk", ScalarAttributeType.S, KeyType.HASH),
                        key("sk", ScalarAttributeType.N, KeyType.RANGE))),
                Arguments.of("other key types", List.of(key("pk", ScalarAttributeType.B, KeyType.HASH),
                        key("sk", ScalarAttributeType.S, KeyType.RANGE))));
    }

    @Test
    void tableWithSwappedKeysFailsVerificationThoughRequestsWouldWork() {
        // pk as sort key and sk as partition key: every request still names an item, so only verify() can tell.
        String name = "swapped-" + UUID.randomUUID().toString().substring(0, 8);
        client.createTable(b -> b.tableName(name).billingMode(BillingMode.PAY_PER_REQUEST)
                .attributeDefinitions(AttributeDefinition.builder().attributeName("pk").attributeType(ScalarAttributeType.S)
                        .build(), AttributeDefinition.builder().attributeName("sk").attributeType(ScalarAttributeType.S).build())
                .keySchema(KeySchemaElement.builder().attributeName("sk").keyType(KeyType.HASH).build(),
                        KeySchemaElement.builder().attributeName("pk").keyType(KeyType.RANGE).build()));
        assertThatThrownBy(() -> TableBootstrap.of(client, name).verify()).isInstanceOf(LockTableException.class)
                .hasMessageContaining("no partition key 'pk' of type S").hasMessageContaining("no sort key 'sk' of type S");
    }

    record Key(String name, ScalarAttributeType type, KeyType keyType) {
    }

    static Key key(String name, ScalarAttributeType type, KeyType keyType) {
        return new Key(name, type, keyType);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("wrongTables")
    void tableWithTheWrongKeySchemaIsNamedWithTheFix(String described, List<Key> keys) {
        String name = "wrong-" + UUID.randomUUID().toString().substring(0, 8);
        client.createTable(b -> b.tableName(name).billingMode(BillingMode.PAY_PER_REQUEST)
                .attributeDefinitions(keys.stream().map(k -> AttributeDefinition.builder().attributeName(k.name())
                        .attributeType(k.type()).build()).toList())
                .keySchema(keys.stream().map(k -> KeySchemaElement.builder().attributeName(k.name())
                        .keyType(k.keyType()).build()).toList()));

        assertThatThrownBy(() -> TableBootstrap.of(client, name).verify()).isInstanceOf(LockTableException.class)
                .hasMessageContaining("'" + name + "' cannot hold locks")
                .hasMessageContaining("partition key 'pk' (S), sort key 'sk' (S)");
        try (LockTemplate wrong = builder().tableName(name).build()) {
            assertThatThrownBy(() -> wrong.acquire("order-1", Duration.ZERO)).isInstanceOf(LockTableException.class)
                    .hasMessageContaining("'" + name + "'").hasMessageContaining("partition key 'pk' (S), sort key 'sk' (S)")
                    .hasMessageContaining("TableBootstrap");
            assertThatThrownBy(() -> wrong.tryAcquire("order-1")).isInstanceOf(LockTableException.class);
            assertThatThrownBy(() -> wrong.queue("order-1", null)).isInstanceOf(LockTableException.class);
            assertThat(wrong.activeLocks()).isEmpty();
        }
        assertThat(client.scan(b -> b.tableName(name)).count()).isZero();
    }

    @Test
    void tableWithoutTtlWorksAndBootstrapWarnsWithTheCommandToFixIt() {
        String name = "nottl-" + UUID.randomUUID().toString().substring(0, 8);
        client.createTable(b -> b.tableName(name).billingMode(BillingMode.PAY_PER_REQUEST)
                .attributeDefinitions(AttributeDefinition.builder().attributeName("pk").attributeType(ScalarAttributeType.S)
                        .build(), AttributeDefinition.builder().attributeName("sk").attributeType(ScalarAttributeType.S).build())
                .keySchema(KeySchemaElement.builder().attributeName("pk").keyType(KeyType.HASH).build(),
                        KeySchemaElement.builder().attributeName("sk").keyType(KeyType.RANGE).build()));
        Logger logger = (Logger) LoggerFactory.getLogger(TableBootstrap.class);
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        logger.addAppender(appender);
        try {
            TableBootstrap.Status status = TableBootstrap.of(client, name).verify();
            assertThat(status.usable()).isTrue();
            assertThat(status.ttlEnabled()).isFalse();
            assertThat(appender.list).extracting(ILoggingEvent::getFormattedMessage)
                    .anyMatch(m -> m.contains("TTL is not enabled") && m.contains("update-time-to-live"));
        }
        finally {
            logger.detachAppender(appender);
        }
        try (LockTemplate noTtl = builder().tableName(name).build(); LockHandle lock = noTtl.acquire("order-1", Duration.ZERO)) {
            assertThat(lock.isValid()).isTrue();
        }
        assertThat(TableBootstrap.of(client, name).createIfMissing().ttlEnabled()).as("createIfMissing enables it").isTrue();
    }

    @Test
    void anErrorThrownByAListenerOnceTheLockIsGrantedLeavesNoEntryBehind() {
        LockListener broken = new LockListener() {
            @Override
            public void onAcquired(LockAttempt attempt, LockHandle lock, Duration waited) {
                throw new AssertionError("a listener's bug");
            }
        };
        try (LockTemplate throwing = builder().ownerName("throwing").listener(broken).build()) {
            assertThatThrownBy(() -> throwing.acquire("order-1", Duration.ZERO)).isInstanceOf(AssertionError.class);
            assertThat(items.entriesInTable()).as("no entry renewed for a handle nobody got").isZero();
            assertThat(throwing.activeLocks()).isEmpty();
        }
    }

    // ---- handles ----------------------------------------------------------------------------------------------

    @Test
    void releasingTwiceSendsOneRequest() {
        LockHandle lock = locks.acquire("order-1", Duration.ZERO);
        requests.reset();
        lock.release();
        lock.release();
        lock.close();
        assertThat(requests.count("UpdateItem")).isEqualTo(1);
        assertThat(lock.isValid()).isFalse();
    }

    @Test
    void releaseFromAnotherThreadFreesTheLock() throws Exception {
        LockHandle lock = locks.acquire("order-1", Duration.ZERO);
        CompletableFuture.runAsync(lock::release).get(10, TimeUnit.SECONDS);
        assertThat(lock.isValid()).isFalse();
        Optional<LockHandle> next = other.tryAcquire("order-1");
        assertThat(next).isPresent();
        next.get().release();
        // The thread that acquired it holds nothing any more: a new acquire queues anew.
        try (LockHandle again = locks.acquire("order-1", Duration.ZERO)) {
            assertThat(again.fencingToken()).isGreaterThan(next.get().fencingToken());
        }
    }

    @Test
    void releaseAfterTheLeaseWasLostIsHarmless() throws Exception {
        FaultInjector faults = new FaultInjector();
        try (DynamoDbClient faulty = faults.clientFor(dynamo, 1);
                LockTemplate losing = LockTemplate.builder(faulty).tableName(table).ownerName("losing")
                        .leaseDuration(Duration.ofSeconds(1)).heartbeatInterval(Duration.ofMillis(250)).build()) {
            AtomicReference<LockHandle> handle = new AtomicReference<>();
            assertThatThrownBy(() -> losing.execute(LockRequest.builder("order-1").wait(Duration.ZERO).build(), held -> {
                handle.set(held);
                CompletableFuture<LockHandle> lost = new CompletableFuture<>();
                held.onLost(lost::complete);
                faults.failAlways(Step.RENEW, Fault.SERVER_ERROR_BEFORE);
                lost.get(30, TimeUnit.SECONDS);
                faults.clear();
                assertThat(faults.injected(Step.RENEW)).isPositive();

                // Inside the scope that holds the lost lock, asking again is an error: no silent re-entry into
                // a critical section that is already broken.
                assertThatThrownBy(() -> losing.acquire("order-1", Duration.ofSeconds(10)))
                        .isInstanceOf(LockLostException.class).hasMessageContaining("end that scope before acquiring again");
                return held;
            })).as("execute tells its caller").isInstanceOf(LockLostException.class);
            LockHandle lock = handle.get();
            lock.release();
            lock.release();
            assertThat(lock.isValid()).isFalse();
            // Released, the lost hold is gone: a new acquire takes a new place in the queue.
            try (LockHandle again = losing.acquire("order-1", Duration.ofSeconds(10))) {
                assertThat(again.fencingToken()).isGreaterThan(lock.fencingToken());
                assertThat(again.isValid()).isTrue();
                assertThat(items.read("order-1", "default").entries()).hasSize(1);
            }
        }
    }

    @Test
    void closedTemplateSaysSo() {
        locks.close();
        assertThatThrownBy(() -> locks.acquire("order-1", Duration.ZERO)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed; build a new one");
    }
}
