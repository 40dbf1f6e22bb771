package io.dynamolock.core.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.BrokenLock;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.QueueSnapshot;
import io.dynamolock.core.test.Await;
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
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Worker JVMs ({@link LockWorkerMain}) contend for locks on DynamoDB Local; the test kills
 * (SIGKILL) or stops (SIGSTOP) some of them and {@link LockHistory} checks the logs: no overlapping
 * critical sections, counters equal to the completed sections, tokens increasing in grant order,
 * no waiter skipped. Lease 2 s, heartbeat 0.5 s, polls 50 ms to 1 s.
 *
 * <p>Takeover times are measured on the wall clock of this one machine (all processes share
 * it) and printed; the assertions allow a generous margin for a loaded 2-core box.
 */
@Timeout(120) // a worker that cannot start fails the test instead of hanging the build
class MultiProcessLockTests extends SharedTablesTestSupport {

    static final long LEASE_MS = 2000;
    static final long MAX_POLL_MS = 1000;
    /** Slack for a loaded 2-core machine, on top of what the protocol promises. */
    static final long MARGIN_MS = 3000;
    static final Duration START = Duration.ofSeconds(90);
    static final Duration STEP = Duration.ofSeconds(30);


    @TempDir
    Path dir;
    final List<WorkerProcess> workers = new ArrayList<>();
    final String entity = "order-" + UUID.randomUUID().toString().substring(0, 8);

    @AfterEach
    void stopWorkers() {
        workers.forEach(WorkerProcess::close);
    }

    WorkerProcess start(String id, Map<String, String> extra) {
        Map<String, String> args = new HashMap<>(Map.of("port", Integer.toString(dynamo.port()), "table", table,
                "data", data, "lease", Long.toString(LEASE_MS), "heartbeat", "500", "minPoll", "50",
                "maxPoll", Long.toString(MAX_POLL_MS)));
        args.putAll(extra);
        WorkerProcess worker = WorkerProcess.start(id, dir, args);
        workers.add(worker);
        return worker;
    }

    List<WorkerProcess> startScripted(String... ids) {
        return startScriptedWithHints("off", ids);
    }

    /** Scripted workers with wake-up hints {@code off}, {@code plain} or {@code authenticated}. */
    List<WorkerProcess> startScriptedWithHints(String wakeUp, String... ids) {
        List<WorkerProcess> started = new ArrayList<>();
        for (String id : ids) {
            started.add(start(id, Map.of("mode", "script", "wakeUp", wakeUp)));
        }
        started.forEach(w -> w.await("READY", START));
        return started;
    }

    LockItems.Item item() {
        return items.read(entity, "default");
    }

    void awaitEntries(int count) {
        Await.until(STEP, count + " entries in the queue of " + entity, () -> item().entries().size() == count);
    }

    long seq() {
        return LockWorkerMain.nextSeq(client, data);
    }

    LockHistory history() {
        return LockHistory.read(workers.stream().map(WorkerProcess::log).toList());
    }

    Map<String, long[]> counters(String... entities) {
        Map<String, long[]> counters = new HashMap<>();
        for (String e : entities) {
            counters.put(e, new long[] {LockWorkerMain.counter(client, data, e, "fenced"),
                    LockWorkerMain.counter(client, data, e, "plain")});
        }
        return counters;
    }

    /** A numeric {@code name=value} field of an event line. */
    static long field(String event, String name) {
        for (String part : event.split(" ")) {
            if (part.startsWith(name + "=")) {
                return Long.parseLong(part.substring(name.length() + 1));
            }
        }
        throw new AssertionError("no " + name + " in " + event);
    }

    String allOutput() {
        StringBuilder all = new StringBuilder();
        workers.forEach(w -> all.append("\n--- worker ").append(w.id()).append(":\n").append(w.output()));
        return all.toString();
    }

    void exitAll() {
        for (WorkerProcess worker : workers) {
            if (worker.isAlive()) {
                worker.send("EXIT");
                assertThat(worker.waitForExit(STEP)).isZero();
            }
        }
    }

    /**
     * {@code first} holds the lock of a killed holder: it writes and releases, then {@code second} does; checks
     * the history: no violation, both sections counted.
     */
    LockHistory finishAfterKilledHolder(WorkerProcess first, WorkerProcess second, String killed, long killSeq,
            String scenario) {
        first.send("WRITE " + entity);
        first.send("RELEASE " + entity);
        second.await("ACQUIRED ", STEP);
        second.send("WRITE " + entity);
        second.send("RELEASE " + entity);
        second.await("RELEASED ", STEP);
        exitAll();

        LockHistory history = history();
        history.killed(killed, killSeq);
        LockHistory.Report report = history.check(counters(entity));
        System.out.println(scenario + ": " + report.summary());
        assertThat(report.violations()).isEmpty();
        assertThat(report.completed()).isEqualTo(2);
        assertThat(counters(entity).get(entity)).containsExactly(2, 2);
        return history;
    }

    /** A live holder "h", a waiter killed in the queue behind it, and the waiter "w" behind that one. */
    record KilledWaiter(WorkerProcess holder, WorkerProcess waiter, String killed, long killSeq, LockItems.Entry dead) {
    }

    /** Queues {@code id} ({@code options}, e.g. " fail-closed") between "h", holding, and "w", then kills it. */
    KilledWaiter waiterKilledBehindAHolder(String id, String options) {
        List<WorkerProcess> started = startScripted("h", id, "w");
        WorkerProcess holder = started.get(0);
        holder.send("ACQUIRE " + entity + " 30000");
        holder.await("READ ", STEP);
        started.get(1).send("ACQUIRE " + entity + " 30000" + options);
        awaitEntries(2);
        started.get(2).send("ACQUIRE " + entity + " 30000");
        awaitEntries(3);
        started.get(1).kill();
        long killSeq = seq();
        return new KilledWaiter(holder, started.get(2), id, killSeq, item().of("w" + id + "-").get(0));
    }

    /** Once the holder has released and the waiter holds: its section, then the whole history checked. */
    LockHistory finishAfterKilledWaiter(KilledWaiter killed, String scenario) {
        killed.waiter().send("WRITE " + entity);
        killed.waiter().send("RELEASE " + entity);
        killed.waiter().await("RELEASED ", STEP);
        exitAll();

        LockHistory history = history();
        history.killed(killed.killed(), killed.killSeq());
        LockHistory.Report report = history.check(counters(entity));
        System.out.println(scenario + ": " + report.summary());
        assertThat(report.violations()).isEmpty();
        assertThat(report.completed()).isEqualTo(2);
        assertThat(counters(entity).get(entity)).containsExactly(2, 2);
        assertThat(item().entries()).isEmpty();
        return history;
    }

    /** With wake-up hints off, plain and authenticated: hints may only make handoffs faster, never unsafe. */
    @ParameterizedTest(name = "wake-up hints {0}")
    @ValueSource(strings = {"off", "plain", "authenticated"})
    void contendingWorkersKeepExclusionOrderAndCounts(String wakeUp) {
        Contention run = contend(4, List.of(entity + "-alpha", entity + "-beta"), Map.of("wakeUp", wakeUp));
        if (wakeUp.equals("off")) {
            assertThat(run.useful()).isZero();
        }
        else {
            assertThat(run.useful()).as("hints handed locks over between the workers").isPositive();
        }
    }

    /**
     * Six workers on one lock, each named with 200 characters: a queue of five or six no longer fits a datagram,
     * so authenticated hints and hand-overs go out cut after the entries they are for (an enqueue's word, which
     * cannot be cut, is dropped). Exclusion, order and counts hold as with short queues.
     */
    @Test
    void authenticatedHintsCutToFitADatagramKeepExclusionOrderAndCounts() {
        Contention run = contend(6, List.of(entity + "-long"), Map.of("wakeUp", "authenticated", "ownerLength", "200"));
        assertThat(run.dropped()).as("states too long for a datagram did occur").isPositive();
        assertThat(run.useful()).as("hints handed locks over between the workers").isPositive();
    }

    private record Contention(long useful, long dropped) {
    }

    /** {@code count} workers take each of {@code entities} 12 times; checks the whole history and the counters. */
    private Contention contend(int count, List<String> entities, Map<String, String> extra) {
        int perWorker = 12;
        for (int i = 0; i < count; i++) {
            // A 3 s lease here: no lease may be lost in this run, and the box may be starved for more than the
            // 1.5 s (lease - heartbeat) a 2 s lease tolerates.
            Map<String, String> args = new HashMap<>(Map.of("mode", "loop", "entities", String.join(",", entities),
                    "iterations", Integer.toString(perWorker), "holdMinMs", "5", "holdMaxMs", "25", "seed",
                    Integer.toString(i), "lease", "3000"));
            args.putAll(extra);
            start(Integer.toString(i), args);
        }
        workers.forEach(w -> w.await("READY", START));
        workers.forEach(w -> w.send("GO"));
        List<String> done = workers.stream().map(w -> w.await("DONE ", STEP)).toList();
        workers.forEach(w -> assertThat(w.waitForExit(Duration.ofSeconds(180))).as(w.output()).isZero());

        String[] names = entities.toArray(String[]::new);
        LockHistory history = history();
        LockHistory.Report report = history.check(counters(names));
        System.out.println("contention, " + extra + ": " + report.summary() + " waitingSeen=" + history.waitingSeen());

        assertThat(report.violations()).isEmpty();
        assertThat(report.completed()).isEqualTo(count * perWorker);
        assertThat(report.failures()).isEmpty();
        assertThat(report.lost()).as(allOutput()).isZero();
        assertThat(history.waitingSeen()).as("the workers did contend").isPositive();
        assertThat(counters(names).values().stream().mapToLong(c -> c[0]).sum()).isEqualTo(count * perWorker);
        for (String name : names) {
            assertThat(items.read(name, "default").entries()).isEmpty();
        }
        return new Contention(done.stream().mapToLong(event -> field(event, "hintsUseful")).sum(),
                done.stream().mapToLong(event -> field(event, "hintsDropped")).sum());
    }

    /**
     * Workers {@code holderName}, "a" and "b": the holder takes the lock ({@code holderOptions}, e.g. " fail-closed")
     * and hangs in its critical section; "a" then "b" queue behind it, waiting up to {@code waitMs}.
     */
    private List<WorkerProcess> twoWaitersBehindAHungHolder(String wakeUp, String holderName, String holderOptions,
            long waitMs) {
        List<WorkerProcess> started = startScriptedWithHints(wakeUp, holderName, "a", "b");
        WorkerProcess holder = started.get(0);
        holder.send("ACQUIRE " + entity + " 30000" + holderOptions);
        holder.await("READ ", STEP);
        holder.send("HANG " + entity);
        holder.await("HANG ", STEP);
        started.get(1).send("ACQUIRE " + entity + " " + waitMs);
        awaitEntries(2);
        started.get(2).send("ACQUIRE " + entity + " " + waitMs);
        awaitEntries(3);
        return started;
    }

    /** With hints too: a crash must not be hidden or hurried by them (polls are rarer with hints on). */
    @ParameterizedTest(name = "wake-up hints {0}")
    @ValueSource(strings = {"off", "authenticated"})
    void killedHolderIsReplacedByTheNextWaiterOneLeaseAfterItsLastHeartbeat(String wakeUp) {
        List<WorkerProcess> started = twoWaitersBehindAHungHolder(wakeUp, "k", "", 30000);
        WorkerProcess holder = started.get(0);
        WorkerProcess first = started.get(1);
        WorkerProcess second = started.get(2);

        long killWall = System.currentTimeMillis();
        holder.kill();
        long killSeq = seq();
        LockItems.Entry dead = item().of("wk-").get(0);
        String granted = first.await("ACQUIRED ", STEP);

        long grantWall = field(granted, "wall");
        long afterKill = grantWall - killWall;
        long afterExpiry = grantWall - dead.expiresAtMillis();
        System.out.printf("killed holder: lease %d ms; takeover %d ms after the kill, %d ms after the entry's expiry%n",
                LEASE_MS, afterKill, afterExpiry);
        assertThat(afterExpiry).as("not before the dead holder's lease ran out").isGreaterThanOrEqualTo(0);
        assertThat(afterExpiry).as("within a poll interval of the expiry (+margin)").isLessThan(MAX_POLL_MS + MARGIN_MS);
        assertThat(afterKill).as("within lease + poll (+margin)").isLessThan(LEASE_MS + MAX_POLL_MS + MARGIN_MS);
        assertThat(second.events()).noneMatch(e -> e.startsWith("ACQUIRED"));
        assertThat(item().of("wk-")).as("the dead holder's entry was purged").isEmpty();

        LockHistory history = finishAfterKilledHolder(first, second, "k", killSeq, "killed holder");
        assertThat(history.sections(entity)).extracting(s -> s.worker).containsExactly("k", "a", "b");
        assertThat(item().entries()).isEmpty();
    }

    @Test
    void killedFailClosedHolderKeepsTheLockUntilBrokenByTicket() throws Exception {
        List<WorkerProcess> started = twoWaitersBehindAHungHolder("off", "f", " fail-closed", 60000);
        WorkerProcess holder = started.get(0);
        WorkerProcess first = started.get(1);
        WorkerProcess second = started.get(2);

        holder.kill();
        long killSeq = seq();
        long killWall = System.currentTimeMillis();
        LockItems.Entry dead = item().of("wf-").get(0);
        // Nothing can happen here but the passing of time: wait out several leases past the dead entry's expiry.
        long waitedPast = 4 * LEASE_MS;
        Await.until(STEP, "4 leases past the dead entry's expiry",
                () -> System.currentTimeMillis() > dead.expiresAtMillis() + waitedPast);
        assertThat(first.events()).noneMatch(e -> e.startsWith("ACQUIRED") || e.startsWith("FAILED"));
        assertThat(second.events()).noneMatch(e -> e.startsWith("ACQUIRED") || e.startsWith("FAILED"));
        assertThat(item().of("wf-")).as("never purged by the waiters").containsExactly(dead);
        assertThat(item().ttlEpochSeconds()).as("never removed by TTL while the waiters renew")
                .isEqualTo(Instant.parse("9999-12-31T23:59:59Z").getEpochSecond());

        try (LockTemplate operator = LockTemplate.builder(client).tableName(table).build()) {
            QueueSnapshot.Entry shown = operator.queue(entity, null).entries().get(0);
            assertThat(shown.ticket()).isEqualTo(dead.ticket());
            assertThat(shown.failClosed()).isTrue();
            assertThat(shown.isSilentAt(Instant.now())).isTrue();
            assertThat(shown.lastRenewedAt()).isBefore(Instant.ofEpochMilli(killWall))
                    .isEqualTo(shown.leaseExpiresAt().minusMillis(LEASE_MS));
            assertThat(operator.queue(entity, null).entries().subList(1, 3)).as("the waiters are alive")
                    .noneMatch(e -> e.isSilentAt(Instant.now()));

            long breakWall = System.currentTimeMillis();
            BrokenLock broken = operator.breakLock(entity, null, dead.ticket());
            assertThat(broken.entry().owner()).isEqualTo(dead.owner());
            assertThat(broken.entry().failClosed()).isTrue();
            String granted = first.await("ACQUIRED ", STEP);
            System.out.printf("killed fail-closed holder: no grant for %d ms after its lease ended; first waiter"
                    + " granted %d ms after the break%n", breakWall - dead.expiresAtMillis(),
                    field(granted, "wall") - breakWall);
            assertThat(field(granted, "token")).isGreaterThan(dead.ticket());
        }
        assertThat(second.events()).noneMatch(e -> e.startsWith("ACQUIRED"));
        LockHistory history = finishAfterKilledHolder(first, second, "f", killSeq, "killed fail-closed holder");
        assertThat(history.sections(entity)).extracting(s -> s.worker).containsExactly("f", "a", "b");
        assertThat(item().entries()).isEmpty();
        assertThat(item().ttlEpochSeconds()).as("the item may expire again")
                .isLessThan(Instant.now().plus(Duration.ofHours(2)).getEpochSecond());
    }

    @Test
    void killedWaiterIsSkippedOnceItsLeaseRunsOut() {
        KilledWaiter killed = waiterKilledBehindAHolder("d", "");
        WorkerProcess holder = killed.holder();
        WorkerProcess waiter = killed.waiter();
        LockItems.Entry dead = killed.dead();
        holder.send("WRITE " + entity);
        holder.send("RELEASE " + entity);
        long releaseWall = field(holder.await("RELEASED ", STEP), "wall");
        long grantWall = field(waiter.await("ACQUIRED ", STEP), "wall");

        long due = Math.max(releaseWall, dead.expiresAtMillis());
        System.out.printf("killed waiter: holder released %d ms before the dead waiter's expiry; next waiter granted"
                + " %d ms after both%n", dead.expiresAtMillis() - releaseWall, grantWall - due);
        assertThat(grantWall).as("not before the dead waiter's lease ran out").isGreaterThanOrEqualTo(dead.expiresAtMillis());
        assertThat(grantWall - due).isLessThan(MAX_POLL_MS + MARGIN_MS);
        assertThat(item().of("wd-")).as("the dead waiter's entry was purged").isEmpty();

        finishAfterKilledWaiter(killed, "killed waiter");
    }

    /**
     * A fail-closed waiter killed before its turn never held: the waiter behind it removes it once its lease has run
     * out, while the live holder ahead still holds, and is granted after that holder.
     */
    @Test
    void killedFailClosedWaiterIsRemovedWhileTheHolderAheadStillKeepsItOut() {
        KilledWaiter killed = waiterKilledBehindAHolder("c", " fail-closed");
        WorkerProcess holder = killed.holder();
        WorkerProcess waiter = killed.waiter();
        LockItems.Entry dead = killed.dead();
        Await.until(STEP, "the dead fail-closed waiter's entry to be removed", () -> item().of("wc-").isEmpty());
        long removedWall = System.currentTimeMillis();
        assertThat(removedWall).as("not before its lease ran out").isGreaterThanOrEqualTo(dead.expiresAtMillis());
        assertThat(holder.events()).as("the holder ahead still holds").noneMatch(e -> e.startsWith("RELEASED"));
        assertThat(waiter.events()).noneMatch(e -> e.startsWith("ACQUIRED"));
        System.out.printf("killed fail-closed waiter: removed %d ms after its lease ran out%n",
                removedWall - dead.expiresAtMillis());

        holder.send("WRITE " + entity);
        holder.send("RELEASE " + entity);
        holder.await("RELEASED ", STEP);
        assertThat(field(waiter.await("ACQUIRED ", STEP), "token")).isGreaterThan(dead.ticket());

        LockHistory history = finishAfterKilledWaiter(killed, "killed fail-closed waiter");
        assertThat(history.sections(entity)).extracting(s -> s.worker).containsExactly("h", "w");
        assertThat(item().ttlEpochSeconds()).as("the item may expire again")
                .isLessThan(Instant.now().plus(Duration.ofHours(2)).getEpochSecond());
    }

    @ParameterizedTest(name = "wake-up hints {0}")
    @ValueSource(strings = {"off", "authenticated"})
    void pausedHolderLearnsItsLeaseIsLostAndItsStaleWriteIsFenced(String wakeUp) {
        List<WorkerProcess> started = startScriptedWithHints(wakeUp, "p", "n");
        WorkerProcess paused = started.get(0);
        WorkerProcess next = started.get(1);
        paused.send("ACQUIRE " + entity + " 30000");
        paused.await("READ ", STEP);

        long pauseSeq = seq();
        paused.pause();
        next.send("ACQUIRE " + entity + " 30000");
        next.await("ACQUIRED ", STEP);
        assertThat(item().of("wp-")).as("the stopped holder's expired entry was purged").isEmpty();
        next.send("WRITE " + entity);
        assertThat(next.await("WROTE ", STEP)).contains("fenced=OK");
        next.send("RELEASE " + entity);
        next.await("RELEASED ", STEP);

        long contSeq = seq();
        long resumeWall = System.currentTimeMillis();
        paused.resume();
        String lost = paused.await("LOST ", STEP);
        System.out.printf("paused holder: lost-lease callback %d ms after SIGCONT%n", field(lost, "wall") - resumeWall);
        assertThat(lost).contains("valid=false");
        paused.send("STATUS " + entity);
        assertThat(paused.await("STATUS ", STEP)).contains("valid=false");
        paused.send("WRITE " + entity);
        assertThat(paused.await("WROTE ", STEP)).as("the stale holder's write is rejected by the fence")
                .contains("fenced=REJECTED").contains("plain=SKIPPED");
        paused.send("RELEASE " + entity);
        paused.await("RELEASED ", STEP);
        exitAll();

        LockHistory history = history();
        history.paused("p", pauseSeq, contSeq);
        LockHistory.Report report = history.check(counters(entity));
        System.out.println("paused holder: " + report.summary());
        assertThat(report.violations()).isEmpty();
        assertThat(report.lost()).isEqualTo(1);
        assertThat(counters(entity).get(entity)).containsExactly(1, 1);
        assertThat(item().entries()).isEmpty();
    }
}
