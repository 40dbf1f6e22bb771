package io.dynamolock.core.test;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockInfo;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.WakeUpOptions;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;

/**
 * A worker process for multi-process lock tests: contends for locks with a {@link LockTemplate}
 * against DynamoDB Local on 127.0.0.1 and writes what it did as events, one per line, to its log
 * file and (prefixed with {@code @}) to stdout. {@link LockHistory} checks the logs of all workers.
 *
 * <p>Each critical section: acquire; take a global sequence number (a DynamoDB atomic counter,
 * comparable across processes); claim the entity's counter item with the fencing token
 * ({@link FencedWrite}); read the counter item; hold; write {@code fenced = read + 1} fenced by the
 * token, and {@code plain = read + 1} unconditionally (only if {@code isValid()}); take a sequence
 * number; check {@code isValid()}; release. Events:
 * <pre>
 * ACQUIRED entity token owner reqSeq seq wall waitedMs   (granted between reqSeq and seq)
 * CLAIMED  entity token ok
 * READ     entity token fenced plain
 * WROTE    entity token validBefore fenced=OK|REJECTED|RETRIED plain=OK|SKIPPED  (RETRIED: rejected on the
 *          SDK's retry of an attempt whose answer was lost, which may have been written)
 * RELEASED entity token seq valid wall
 * LOST     entity token wall            (lost-lease callback)
 * WAITING  entity ticket owner          (first sight of an own waiting entry)
 * FAILED   entity type message          (acquire failed)
 * HANG     entity token                 (script: holds until killed)
 * </pre>
 *
 * <p>Arguments ({@code key=value}): {@code port table data id log lease heartbeat minPoll maxPoll}
 * (durations in ms), {@code wakeUp=off|plain|authenticated} and {@code mode=loop|script}. Loop mode also takes {@code entities=a,b},
 * {@code iterations}, {@code durationMs}, {@code holdMinMs}, {@code holdMaxMs}, {@code waitMs},
 * {@code seed}; it prints {@code @READY}, waits for a {@code GO} line on stdin, runs, prints
 * {@code @DONE} and exits. Script mode reads commands from stdin:
 * {@code ACQUIRE entity waitMs [fail-closed] | WRITE entity | RELEASE entity | STATUS entity | HANG entity | EXIT}.
 * The process always ends with {@code System.exit}: DynamoDB Local and SDK threads would keep it alive.
 */
public final class LockWorkerMain {

    /** How a fenced write is logged: {@link LockHistory} counts a RETRIED one as maybe written. */
    private static final Map<FencedWrite.Result, String> FENCED_EVENTS = Map.of(FencedWrite.Result.WRITTEN, "OK",
            FencedWrite.Result.REJECTED, "REJECTED", FencedWrite.Result.REJECTED_ON_RETRY, "RETRIED");


    private final Map<String, String> args;
    private final String id;
    private final DynamoDbClient client;
    private final LockTemplate locks;
    private final String data;
    private final Writer log;
    private final PrintStream out = System.out;
    private final Map<String, Section> open = new ConcurrentHashMap<>();
    private final Set<String> seenWaiting = ConcurrentHashMap.newKeySet();

    /** An open critical section. */
    private static final class Section {
        final String entity;
        final LockHandle lock;
        long fenced;
        long plain;

        Section(String entity, LockHandle lock) {
            this.entity = entity;
            this.lock = lock;
        }
    }

    private LockWorkerMain(Map<String, String> args) throws IOException {
        this.args = args;
        this.id = args.get("id");
        this.data = args.get("data");
        this.client = client(Integer.parseInt(args.get("port")));
        this.locks = LockTemplate.builder(client).tableName(args.get("table"))
                .ownerName(owner("w" + id + "-" + ProcessHandle.current().pid(), args.get("ownerLength")))
                .leaseDuration(ms("lease", 2000)).heartbeatInterval(ms("heartbeat", 500))
                .pollInterval(ms("minPoll", 50), ms("maxPoll", 1000))
                .wakeUp(wakeUp(args.getOrDefault("wakeUp", "off")))
                .build();
        this.log = Files.newBufferedWriter(Path.of(args.get("log")), StandardCharsets.UTF_8,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    /** {@code name}, padded to {@code length} characters if given: long owners make a short queue fill a datagram. */
    private static String owner(String name, String length) {
        return length == null ? name : (name + "-".repeat(Integer.parseInt(length))).substring(0, Integer.parseInt(length));
    }

    /** The secret of authenticated wake-up hints between workers. */
    public static final String WAKE_UP_SECRET = "multi-process-test-secret-0123456789";

    /** {@code off}, {@code plain} or {@code authenticated}: wake-up hints on loopback, ports from 0. */
    static WakeUpOptions wakeUp(String mode) {
        return switch (mode) {
            case "off" -> WakeUpOptions.disabled();
            case "plain" -> WakeUpOptions.builder().bindAddress("127.0.0.1").build();
            case "authenticated" -> WakeUpOptions.builder().bindAddress("127.0.0.1").secret(WAKE_UP_SECRET).build();
            default -> throw new IllegalArgumentException("wakeUp=" + mode + ": use off, plain or authenticated");
        };
    }

    public static void main(String[] argv) {
        int status = 0;
        try {
            Map<String, String> args = new HashMap<>();
            for (String arg : argv) {
                int eq = arg.indexOf('=');
                args.put(arg.substring(0, eq), arg.substring(eq + 1));
            }
            LockWorkerMain worker = new LockWorkerMain(args);
            worker.watchWaiting();
            if ("script".equals(args.getOrDefault("mode", "loop"))) {
                worker.script();
            }
            else {
                worker.loop();
            }
        }
        catch (Throwable ex) {
            ex.printStackTrace();
            status = 1;
        }
        System.out.flush();
        System.exit(status);
    }

    /** A client of DynamoDB Local on 127.0.0.1:{@code port}, SDK defaults otherwise. */
    public static DynamoDbClient client(int port) {
        return DynamoDbClient.builder()
                .endpointOverride(URI.create("http://127.0.0.1:" + port))
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")))
                .overrideConfiguration(c -> c.apiCallAttemptTimeout(Duration.ofSeconds(2)))
                .build();
    }

    /** Creates the table of counters and the sequence item ({@code pk} S). */
    public static void createDataTable(DynamoDbClient client, String table) {
        client.createTable(b -> b.tableName(table).billingMode(BillingMode.PAY_PER_REQUEST)
                .attributeDefinitions(AttributeDefinition.builder().attributeName("pk")
                        .attributeType(ScalarAttributeType.S).build())
                .keySchema(KeySchemaElement.builder().attributeName("pk").keyType(KeyType.HASH).build()));
        client.waiter().waitUntilTableExists(b -> b.tableName(table));
    }

    /** The next global sequence number: comparable across processes, unlike their clocks. */
    public static long nextSeq(DynamoDbClient client, String table) {
        return Long.parseLong(client.updateItem(b -> b.tableName(table).key(key("seq"))
                .updateExpression("ADD #n :one").expressionAttributeNames(Map.of("#n", "n"))
                .expressionAttributeValues(Map.of(":one", AttributeValue.fromN("1")))
                .returnValues(ReturnValue.UPDATED_NEW)).attributes().get("n").n());
    }

    /** The counter item of {@code entity}: {@code fenced}, {@code plain}, {@code lockToken}. */
    public static Map<String, AttributeValue> counterKey(String entity) {
        return key("counter#" + entity);
    }

    /** A counter of {@code entity} as stored now, 0 if absent. */
    public static long counter(DynamoDbClient client, String table, String entity, String attribute) {
        Map<String, AttributeValue> item = client.getItem(b -> b.tableName(table).key(counterKey(entity))
                .consistentRead(true)).item();
        AttributeValue value = item == null ? null : item.get(attribute);
        return value == null ? 0 : Long.parseLong(value.n());
    }

    private static Map<String, AttributeValue> key(String pk) {
        return Map.of("pk", AttributeValue.fromS(pk));
    }

    // ---- modes -----------------------------------------------------------------------------------------------

    private void loop() throws IOException {
        List<String> entities = List.of(args.get("entities").split(","));
        int iterations = Integer.parseInt(args.getOrDefault("iterations", "0"));
        long durationMs = Long.parseLong(args.getOrDefault("durationMs", "0"));
        int holdMin = Integer.parseInt(args.getOrDefault("holdMinMs", "5"));
        int holdMax = Integer.parseInt(args.getOrDefault("holdMaxMs", "30"));
        Duration wait = ms("waitMs", 60_000);
        Random random = new Random(Long.parseLong(args.getOrDefault("seed", id)));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        emit("READY w=" + id);
        String go = in.readLine();
        if (go == null || !go.trim().equals("GO")) {
            throw new IllegalStateException("expected GO, got " + go);
        }
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(durationMs);
        int done = 0;
        for (int i = 0; iterations > 0 ? i < iterations : System.nanoTime() - end < 0; i++) {
            String entity = entities.get(random.nextInt(entities.size()));
            Section section = enter(entity, wait, false);
            if (section == null) {
                continue;
            }
            sleep(holdMin + random.nextInt(Math.max(1, holdMax - holdMin + 1)));
            write(section);
            exit(section);
            done++;
        }
        emit("DONE w=" + id + " sections=" + done + " hintsSent=" + locks.wakeUpStats().sent() + " hintsReceived="
                + locks.wakeUpStats().received() + " hintsUseful=" + locks.wakeUpStats().useful() + " hintsDropped="
                + locks.wakeUpStats().dropped());
        locks.close();
    }

    private void script() throws IOException {
        emit("READY w=" + id);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] cmd = line.trim().split(" ");
            switch (cmd[0]) {
                case "ACQUIRE" -> enter(cmd[1], Duration.ofMillis(Long.parseLong(cmd[2])),
                        cmd.length > 3 && cmd[3].equals("fail-closed"));
                case "WRITE" -> write(open.get(cmd[1]));
                case "RELEASE" -> exit(open.get(cmd[1]));
                case "STATUS" -> emit("STATUS w=" + id + " entity=" + cmd[1] + " valid=" + open.get(cmd[1]).lock.isValid());
                case "HANG" -> emit("HANG w=" + id + " entity=" + cmd[1] + " token=" + open.get(cmd[1]).lock.fencingToken());
                case "EXIT" -> {
                    return;
                }
                default -> emit("UNKNOWN w=" + id + " line=" + line.replace(' ', '_'));
            }
        }
    }

    // ---- one critical section ------------------------------------------------------------------------------

    private Section enter(String entity, Duration wait, boolean failClosed) {
        // The grant happens between reqSeq and seq: a process stopped right after acquire() returns logs its grant late.
        long reqSeq = nextSeq(client, data);
        long start = System.nanoTime();
        LockHandle lock;
        try {
            lock = locks.acquire(LockRequest.builder(entity).wait(wait).failClosed(failClosed).build());
        }
        catch (RuntimeException ex) {
            emit("FAILED w=" + id + " entity=" + entity + " type=" + ex.getClass().getSimpleName() + " message="
                    + String.valueOf(ex.getMessage()).replaceAll("\\s+", "_"));
            return null;
        }
        long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        long seq = nextSeq(client, data);
        emit("ACQUIRED w=" + id + " entity=" + entity + " token=" + lock.fencingToken() + " owner=" + lock.owner()
                + " reqSeq=" + reqSeq + " seq=" + seq + " wall=" + System.currentTimeMillis() + " waitedMs=" + waited);
        lock.onLost(l -> emit("LOST w=" + id + " entity=" + entity + " token=" + l.fencingToken() + " wall="
                + System.currentTimeMillis() + " valid=" + l.isValid()));
        Section section = new Section(entity, lock);
        open.put(entity, section);
        boolean claimed = FencedWrite.update(client, data, counterKey(entity), "", Map.of(), Map.of(),
                lock.fencingToken());
        emit("CLAIMED w=" + id + " entity=" + entity + " token=" + lock.fencingToken() + " ok=" + claimed);
        section.fenced = counter(client, data, entity, "fenced");
        section.plain = counter(client, data, entity, "plain");
        emit("READ w=" + id + " entity=" + entity + " token=" + lock.fencingToken() + " fenced=" + section.fenced
                + " plain=" + section.plain);
        return section;
    }

    private void write(Section section) {
        LockHandle lock = section.lock;
        boolean validBefore = lock.isValid();
        FencedWrite.Result fenced = FencedWrite.write(client, data, counterKey(section.entity), "#f = :f",
                Map.of("#f", "fenced"), Map.of(":f", AttributeValue.fromN(Long.toString(section.fenced + 1))),
                lock.fencingToken());
        String plain = "SKIPPED";
        if (validBefore) {
            // The unprotected read-modify-write: correct only under mutual exclusion.
            client.updateItem(b -> b.tableName(data).key(counterKey(section.entity))
                    .updateExpression("SET #p = :p").expressionAttributeNames(Map.of("#p", "plain"))
                    .expressionAttributeValues(Map.of(":p", AttributeValue.fromN(Long.toString(section.plain + 1)))));
            plain = "OK";
        }
        emit("WROTE w=" + id + " entity=" + section.entity + " token=" + lock.fencingToken() + " validBefore="
                + validBefore + " fenced=" + FENCED_EVENTS.get(fenced) + " plain=" + plain);
    }

    private void exit(Section section) {
        // Sequence first, validity after: valid now means nobody else was granted before the sequence number.
        long seq = nextSeq(client, data);
        boolean valid = section.lock.isValid();
        emit("RELEASED w=" + id + " entity=" + section.entity + " token=" + section.lock.fencingToken() + " seq=" + seq
                + " valid=" + valid + " wall=" + System.currentTimeMillis());
        open.remove(section.entity);
        section.lock.release();
    }

    /** Logs each own waiting entry once, with its ticket, so the checker can tell skipped tickets. */
    private void watchWaiting() {
        ScheduledExecutorService watcher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "waiting-watcher");
            thread.setDaemon(true);
            return thread;
        });
        watcher.scheduleWithFixedDelay(() -> {
            for (LockInfo info : locks.activeLocks()) {
                if (!info.holding() && info.ticket() != 0 && seenWaiting.add(info.owner())) {
                    emit("WAITING w=" + id + " entity=" + info.entity() + " ticket=" + info.ticket() + " owner="
                            + info.owner());
                }
            }
        }, 10, 10, TimeUnit.MILLISECONDS);
    }

    private synchronized void emit(String event) {
        try {
            log.write(event);
            log.write('\n');
            log.flush();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        out.println("@" + event);
        out.flush();
    }

    private Duration ms(String name, long defaultMs) {
        return Duration.ofMillis(Long.parseLong(args.getOrDefault(name, Long.toString(defaultMs))));
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
