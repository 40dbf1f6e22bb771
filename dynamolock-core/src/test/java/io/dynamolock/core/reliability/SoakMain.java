package io.dynamolock.core.reliability;

import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.test.DynamoDbLocal;
import io.dynamolock.core.test.LockHistory;
import io.dynamolock.core.test.LockItems;
import io.dynamolock.core.test.LockWorkerMain;
import io.dynamolock.core.test.WorkerProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The soak: worker JVMs contend for a few locks for a given time while this process kills
 * (SIGKILL) and stops (SIGSTOP, 1 to 2 leases) random workers, replacing the killed ones; then
 * it waits for the workers to finish, purges, checks the whole history and prints totals.
 * Not part of CI. Run it with {@code scripts/soak.sh 10m}.
 *
 * <pre>
 * SoakMain DURATION [workers=4] [entities=3] [leaseMs=2000] [heartbeatMs=500] [seed=...] [wakeUp=off|plain|authenticated]
 * </pre>
 * Exits 0 when there were no violations and no queue entry is left; 1 otherwise.
 *
 * <p>Purge: a killed worker's entry stays until its lease runs out and someone behind it purges
 * it. At the end the soak waits one lease, then takes and releases every lock once, which purges
 * whatever expired. The lock items themselves stay (they hold the ticket counter that keeps
 * fencing tokens increasing) until DynamoDB TTL deletes them, one hour after their last lease;
 * DynamoDB Local does not run TTL, so they are counted and their TTL printed.
 */
public final class SoakMain {

    public static void main(String[] argv) throws Exception {
        Duration duration = parseDuration(argv.length > 0 ? argv[0] : "10m");
        Map<String, String> options = new HashMap<>();
        for (int i = 1; i < argv.length; i++) {
            String[] kv = argv[i].split("=", 2);
            options.put(kv[0], kv[1]);
        }
        int workerCount = Integer.parseInt(options.getOrDefault("workers", "4"));
        int entityCount = Integer.parseInt(options.getOrDefault("entities", "3"));
        long leaseMs = Long.parseLong(options.getOrDefault("leaseMs", "2000"));
        long heartbeatMs = Long.parseLong(options.getOrDefault("heartbeatMs", "500"));
        long seed = Long.parseLong(options.getOrDefault("seed", Long.toString(System.nanoTime())));
        String wakeUp = options.getOrDefault("wakeUp", System.getenv().getOrDefault("DYNAMOLOCK_SOAK_WAKE_UP", "off"));
        int status;
        try {
            status = new SoakMain(duration, workerCount, entityCount, leaseMs, heartbeatMs, seed, wakeUp).run();
        }
        catch (Throwable failed) {
            // Exit all the same: DynamoDB Local's threads are not daemons, and the soak would never end.
            failed.printStackTrace();
            status = 2;
        }
        System.exit(status);
    }

    private final Duration duration;
    private final int workerCount;
    private final long leaseMs;
    private final long heartbeatMs;
    /** The workers' wake-up hints: off, plain or authenticated. */
    private final String wakeUp;
    private final Random random;
    private final List<String> entities = new ArrayList<>();
    private final List<WorkerProcess> workers = new CopyOnWriteArrayList<>();
    private final List<WorkerProcess> all = new CopyOnWriteArrayList<>();
    private final Path dir = Path.of("target", "soak-" + Instant.now().toString().replace(':', '-'));
    private DynamoDbLocal dynamo;
    private DynamoDbClient client;
    private String table;
    private String data;
    private int started;
    private long deadline;

    private SoakMain(Duration duration, int workerCount, int entityCount, long leaseMs, long heartbeatMs, long seed,
            String wakeUp) {
        this.wakeUp = wakeUp;
        this.duration = duration;
        this.workerCount = workerCount;
        this.leaseMs = leaseMs;
        this.heartbeatMs = heartbeatMs;
        this.random = new Random(seed);
        for (int i = 0; i < entityCount; i++) {
            entities.add("soak-" + i);
        }
        System.out.printf("soak: %s, %d workers, %d locks, lease %d ms, heartbeat %d ms, seed %d, wake-up hints %s,"
                + " logs in %s%n", duration, workerCount, entityCount, leaseMs, heartbeatMs, seed, wakeUp,
                dir.toAbsolutePath());
    }

    private int run() throws Exception {
        dynamo = DynamoDbLocal.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> all.forEach(WorkerProcess::close), "soak-stop"));
        client = dynamo.client();
        table = dynamo.newLockTable();
        data = "soak-data";
        LockWorkerMain.createDataTable(client, data);
        List<String[]> killed = new ArrayList<>();
        List<long[]> pausesSeq = new ArrayList<>();
        List<String> pausedIds = new ArrayList<>();

        deadline = System.nanoTime() + duration.toNanos();
        for (int i = 0; i < workerCount; i++) {
            startWorker();
        }
        int kill = 0;
        int pause = 0;
        long lastReport = System.nanoTime();
        while (System.nanoTime() - deadline < -Duration.ofSeconds(5).toNanos()) {
            Thread.sleep(1000 + random.nextInt(3000));
            workers.removeIf(w -> !w.isAlive());
            if (workers.isEmpty()) {
                break;
            }
            WorkerProcess victim = workers.get(random.nextInt(workers.size()));
            int action = random.nextInt(10);
            if (action < 4) {
                victim.kill();
                long seq = LockWorkerMain.nextSeq(client, data);
                killed.add(new String[] {victim.id(), Long.toString(seq)});
                workers.remove(victim);
                kill++;
                startWorker();
            }
            else if (action < 8) {
                long from = LockWorkerMain.nextSeq(client, data);
                victim.pause();
                Thread.sleep(leaseMs / 2 + random.nextInt((int) (leaseMs * 2)));
                long to = LockWorkerMain.nextSeq(client, data);
                victim.resume();
                pausesSeq.add(new long[] {from, to});
                pausedIds.add(victim.id());
                pause++;
            }
            if (System.nanoTime() - lastReport > Duration.ofSeconds(30).toNanos()) {
                lastReport = System.nanoTime();
                System.out.printf("soak: %d s left, %d kills, %d pauses so far%n",
                        Duration.ofNanos(deadline - System.nanoTime()).toSeconds(), kill, pause);
            }
        }

        for (WorkerProcess worker : workers) {
            int exit = worker.waitForExit(Duration.ofMinutes(2));
            if (exit != 0) {
                System.out.println("soak: worker " + worker.id() + " exited with " + exit + ":\n" + worker.output());
            }
        }

        // Purge: dead workers' entries expire one lease after their last heartbeat; a final acquire/release per
        // lock removes them.
        Thread.sleep(leaseMs + 500);
        try (LockTemplate purge = LockTemplate.builder(client).tableName(table).ownerName("soak-purge")
                .leaseDuration(Duration.ofMillis(leaseMs)).heartbeatInterval(Duration.ofMillis(heartbeatMs)).build()) {
            for (String entity : entities) {
                purge.acquire(entity, Duration.ofSeconds(60)).release();
            }
        }

        LockHistory history = LockHistory.read(all.stream().map(WorkerProcess::log).toList());
        killed.forEach(k -> history.killed(k[0], Long.parseLong(k[1])));
        for (int i = 0; i < pausesSeq.size(); i++) {
            history.paused(pausedIds.get(i), pausesSeq.get(i)[0], pausesSeq.get(i)[1]);
        }
        Map<String, long[]> counters = new HashMap<>();
        for (String entity : entities) {
            counters.put(entity, new long[] {LockWorkerMain.counter(client, data, entity, "fenced"),
                    LockWorkerMain.counter(client, data, entity, "plain")});
        }
        LockHistory.Report report = history.check(counters);
        LockItems items = new LockItems(client, table);
        List<LockItems.Item> left = items.scan();
        int entriesLeft = left.stream().mapToInt(i -> i.entries().size()).sum();
        long latestTtl = left.stream().mapToLong(LockItems.Item::ttlEpochSeconds).max().orElse(0);

        System.out.println();
        System.out.println("==== soak totals ====");
        System.out.printf(Locale.ROOT, "duration            %s%n", duration);
        System.out.printf(Locale.ROOT, "worker JVMs         %d started (%d at a time)%n", started, workerCount);
        System.out.printf(Locale.ROOT, "critical sections   %d completed, %d granted (per lock: %s)%n",
                report.completed(), report.sections(), report.completedByEntity());
        System.out.printf(Locale.ROOT, "kills (SIGKILL)     %d%n", kill);
        System.out.printf(Locale.ROOT, "pauses (SIGSTOP)    %d%n", pause);
        System.out.printf(Locale.ROOT, "leases lost         %d (holders stopped past their lease)%n", report.lost());
        System.out.printf(Locale.ROOT, "failed acquires     %s%n", report.failures());
        System.out.printf(Locale.ROOT, "longest wait        %d ms%n", report.longestWaitMs());
        System.out.printf(Locale.ROOT, "violations          %d%n", report.violations().size());
        report.violations().forEach(v -> System.out.println("  VIOLATION " + v));
        report.notes().forEach(n -> System.out.println("  note: " + n));
        System.out.printf(Locale.ROOT, "queue entries left  %d%n", entriesLeft);
        System.out.printf(Locale.ROOT, "lock items left     %d (no entries; ticket counters kept for fencing, TTL"
                + " deletes them by %s)%n", left.size(), Instant.ofEpochSecond(latestTtl));
        boolean ok = report.violations().isEmpty() && entriesLeft == 0;
        System.out.println(ok ? "soak: PASSED" : "soak: FAILED");
        client.close();
        dynamo.stop();
        return ok ? 0 : 1;
    }

    private void startWorker() {
        long remainingMs = Math.max(1000, Duration.ofNanos(deadline - System.nanoTime()).toMillis());
        String id = Integer.toString(started++);
        Map<String, String> args = new HashMap<>(Map.of("port", Integer.toString(dynamo.port()), "table", table,
                "data", data, "lease", Long.toString(leaseMs), "heartbeat", Long.toString(heartbeatMs), "mode", "loop",
                "entities", String.join(",", entities), "durationMs", Long.toString(remainingMs)));
        args.putAll(Map.of("holdMinMs", "5", "holdMaxMs", "50", "seed", Long.toString(random.nextLong()),
                "wakeUp", wakeUp));
        WorkerProcess worker = WorkerProcess.start(id, dir, args);
        all.add(worker);
        worker.await("READY", Duration.ofSeconds(120));
        worker.send("GO");
        workers.add(worker);
    }

    static Duration parseDuration(String text) {
        String value = text.trim().toLowerCase(Locale.ROOT);
        if (value.startsWith("p")) {
            return Duration.parse(value.toUpperCase(Locale.ROOT));
        }
        long amount = Long.parseLong(value.replaceAll("[a-z]+$", ""));
        return switch (value.replaceAll("^[0-9]+", "")) {
            case "h" -> Duration.ofHours(amount);
            case "m", "min" -> Duration.ofMinutes(amount);
            case "s", "" -> Duration.ofSeconds(amount);
            case "ms" -> Duration.ofMillis(amount);
            default -> throw new IllegalArgumentException("duration '" + text + "': use e.g. 90s, 10m, 1h or PT10M");
        };
    }
}
