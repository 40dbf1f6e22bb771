package io.dynamolock.core.internal;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the leases of one template's live entries, holders and waiters alike.
 *
 * <ul>
 * <li><b>Ending leases on time (R11).</b> One timer thread, which sends no request and runs no callback,
 * marks an entry lost the moment its lease as last confirmed (send time of the last renewal that succeeded,
 * plus the lease) has ended, whatever renewal is in flight then. A renewal answered later does not revive
 * it. After {@link #close()} the timer goes on until the last lease it watches has ended, so every handle
 * still held is reported lost on time.</li>
 * <li><b>Renewing (R12).</b> The timer hands each renewal to the {@linkplain Workers request threads}, which
 * grow with the renewals in flight and shrink when idle, so slow answers cost threads, not leases. A renewal
 * that is refused means the entry was purged: the lease is lost at once. One that fails (throttling,
 * timeouts) is retried sooner, until the lease runs out.</li>
 * <li><b>Background removals</b> of an entry that left the queue are sent in the {@linkplain #removals() removal
 * lanes}, and one whose answer failed is retried here, in those lanes too (a latency spike fails every removal, and
 * their retries must not take the threads renewals need): a fail-open entry's {@linkplain #retryRemoval until its
 * lease would have run out anyway}, a fail-closed entry's until it succeeds.</li>
 * <li><b>Lost-lease callbacks</b> run on {@linkplain Workers threads of their own}, never on the timer.</li>
 * </ul>
 */
final class Leases {

    private static final Logger log = LoggerFactory.getLogger(Leases.class);

    /** Shortest pause before retrying a failed request. */
    static final Duration MIN_RETRY = Duration.ofMillis(100);

    private final QueueTable table;
    private final Clock clock;
    private final Duration interval;
    private final Handoff handoff;
    private final Workers workers;
    private final RemovalLane removals;
    /**
     * Entries whose removal may still be due and whom no lease deadline covers: the threads (and the client, for an
     * owner that closes it on termination) live until each is removed or given up. Every entry from its enqueue
     * until its lease starts (an enqueue answered during close() must be removable), and from its leaving until its
     * removal is sent; a fail-closed one from its enqueue until its removal lands, since its release may come after
     * close() and after its lease, and it never expires.
     */
    private final Set<Acquisition> pendingRemovals = ConcurrentHashMap.newKeySet();
    private final Map<Acquisition, ScheduledFuture<?>> renewals = new ConcurrentHashMap<>();
    /** Pending {@link #sweepLater} removals: close() sends each once more, at once, instead of waiting. */
    private final Set<Sweep> sweeps = ConcurrentHashMap.newKeySet();
    /** Sweeps sent and not answered yet, and close() while it hands sweeps over: the threads stay until then. */
    private final AtomicInteger sweepsInFlight = new AtomicInteger();
    /** Guards {@link #shutDown}: the threads are shut once, and never under a sweep just handed over. */
    private final Object shutdown = new Object();
    private boolean shutDown;
    private final Map<Acquisition, ScheduledFuture<?>> deadlines = new ConcurrentHashMap<>();
    private volatile boolean closed;

    Leases(QueueTable table, Clock clock, Duration interval, Handoff handoff, Workers workers) {
        this.table = table;
        this.clock = clock;
        this.interval = interval;
        this.handoff = handoff;
        this.workers = workers;
        this.removals = new RemovalLane(workers);
    }

    /** Where removals of entries that left the queue are sent, in the background: first attempts and retries. */
    RemovalLane removals() {
        return removals;
    }

    /**
     * Where lost-lease callbacks run: threads of their own, never the timer nor the caller, so that a callback
     * that blocks (a release, say) delays neither the end of another lease nor its renewal, even when every
     * request thread is busy.
     */
    Executor callbacks() {
        return workers.callbacks();
    }

    /** Where the library's own reactions to a loss run: see {@link Workers#reactions()}. */
    Executor reactions() {
        return workers.reactions();
    }

    /**
     * The enqueue of {@code entry} is about to be sent; {@code false} if it must not be, the template being closed.
     * Counted first and checked after, so that close() either sees it pending or it sees close().
     */
    boolean enqueuing(Acquisition entry) {
        pendingRemovals.add(entry);
        if (closed) {
            removed(entry);
            return false;
        }
        return true;
    }

    /** Starts renewing {@code entry} and watching its lease. */
    void start(Acquisition entry) {
        watchDeadline(entry);
        scheduleRenewal(entry, nextRenewal(entry));
        if (!entry.failClosed() && pendingRemovals.remove(entry)) {
            shutDownIfDone(); // its deadline keeps the threads now, unless it is gone already
        }
    }

    /**
     * Stops renewing and watching {@code entry}, which is leaving the queue now: the threads stay until its removal
     * is sent ({@link #removed}), retried if need be ({@link #retryRemoval}).
     */
    void leaving(Acquisition entry) {
        pendingRemovals.add(entry);
        stop(entry);
    }

    /** The entry needs no more removal: it landed, was given up to the lease, or nothing was enqueued. */
    void removed(Acquisition entry) {
        pendingRemovals.remove(entry);
        shutDownIfDone();
    }

    /** Stops renewing and watching {@code entry}: it lost its lease. */
    void stop(Acquisition entry) {
        cancel(renewals.remove(entry));
        cancel(deadlines.remove(entry));
        shutDownIfDone();
    }

    /**
     * Stops renewing. Leases still held end as if the process had died, and their holders are told when
     * they do; the threads end after the last one, and after the removal of every fail-closed entry.
     */
    void close() {
        sweepsInFlight.incrementAndGet(); // close() holds the threads until it has handed every sweep over
        try {
            closeNow();
        }
        finally {
            sweepsInFlight.decrementAndGet();
            shutDownIfDone();
        }
    }

    private void closeNow() {
        closed = true;
        renewals.values().forEach(Leases::cancel);
        renewals.clear();
        // A late enqueue attempt that landed before the close is removed now: nobody would afterwards.
        for (Sweep sweep : List.copyOf(sweeps)) {
            if (sweeps.remove(sweep)) {
                for (int stage = 0; stage < Sweep.STAGES; stage++) {
                    cancel(sweep.scheduled.get(stage));
                }
                sendNow(sweep);
            }
        }
        shutDownIfDone();
    }

    private void shutDownIfDone() {
        synchronized (shutdown) { // with trySend: no sweep is counted and handed over as the threads are shut
            if (!shutDown && closed && deadlines.isEmpty() && pendingRemovals.isEmpty() && sweepsInFlight.get() == 0) {
                shutDown = true;
                workers.shutdown();
            }
        }
    }

    private static void cancel(ScheduledFuture<?> future) {
        if (future != null) {
            future.cancel(false);
        }
    }

    /** Marks the entry lost when its confirmed lease ends; looks again later if a renewal moved the end. */
    private void watchDeadline(Acquisition entry) {
        long until = entry.confirmedUntilNanos();
        ScheduledFuture<?> deadline = workers.schedule(() -> {
            if (!entry.isLive()) {
                return;
            }
            if (System.nanoTime() - entry.confirmedUntilNanos() >= 0) {
                lose(entry, "the lease ran out before a renewal was confirmed");
            }
            else {
                watchDeadline(entry);
            }
        }, until - System.nanoTime());
        if (deadline == null) {
            return;
        }
        deadlines.put(entry, deadline);
        if (!entry.isLive()) {
            stop(entry);
        }
    }

    private void lose(Acquisition entry, String reason) {
        try {
            entry.markLost(reason);
        }
        finally {
            stop(entry); // whatever happened there: a deadline kept would keep a closed template's threads
        }
    }

    private void scheduleRenewal(Acquisition entry, Duration delay) {
        if (!entry.isLive() || closed) {
            return;
        }
        ScheduledFuture<?> renewal = workers.schedule(() -> dispatch(entry), delay.toNanos());
        if (renewal == null) {
            return;
        }
        renewals.put(entry, renewal);
        if (!entry.isLive() || closed) {
            cancel(renewals.remove(entry));
        }
    }

    private void dispatch(Acquisition entry) {
        if (!workers.tryRequestOrBusy(() -> renew(entry), "a renewal")) {
            scheduleRenewal(entry, Workers.BUSY_RETRY);
        }
    }

    private void renew(Acquisition entry) {
        if (!entry.isLive() || closed) {
            return;
        }
        if (entry.abandonedByItsThread()) {
            // Its lease runs out instead, as if the process had died; looked at again at each renewal's time, in
            // case a hold that something else releases joins it meanwhile (a scope the thread carried away).
            if (entry.warnAbandoned()) {
                log.warn("{} is held by thread '{}', which ended without releasing it; its lease is no longer renewed"
                        + " and ends within {} ms", entry, entry.acquiredBy().getName(),
                        Math.max(0, Duration.ofNanos(entry.confirmedUntilNanos() - System.nanoTime()).toMillis()));
            }
            scheduleRenewal(entry, retryDelay(entry)); // from now: the renewal time it missed has passed
            return;
        }
        long sentAt = System.nanoTime();
        if (sentAt - entry.confirmedUntilNanos() >= 0) {
            lose(entry, "the lease ran out before it could be renewed");
            return;
        }
        try {
            long renewedAtMillis = clock.millis();
            QueueState state = table.renew(entry.key(), entry.id(), renewedAtMillis, entry.lease(), entry.failClosed(),
                    renewalTimeout(entry, entry.confirmedUntilNanos() - sentAt));
            if (state.entry(entry.id()) == null) {
                // Refused: another process judged the entry expired and purged it, or an operator broke it.
                lose(entry, "the queue entry was removed by another process: purged after its lease expired (was"
                        + " this JVM paused, or its clock behind by more than the lease?) or broken by an operator");
                return;
            }
            entry.renewed(sentAt);
            // A free look at the queue for this JVM's waiters and holders of the lock, this entry among them.
            handoff.publish(entry.key(), state, clock.millis());
            scheduleRenewal(entry, nextRenewal(entry));
            // Only now, the lease being recorded: a TTL raise may take up to a renewal interval, and one that stalls
            // must not let the deadline pass on a lease that DynamoDB extended (a failed one is sent again by the
            // next write that finds the TTL short, this entry's next renewal at the latest).
            table.keepTtl(entry.key(), state, renewedAtMillis);
        }
        catch (RuntimeException ex) {
            Duration retry = retryDelay(entry);
            log.warn("Renewing the lease of {} failed; retrying in {} ms, {} ms of lease left", entry, retry.toMillis(),
                    Duration.ofNanos(entry.confirmedUntilNanos() - System.nanoTime()).toMillis(), ex);
            scheduleRenewal(entry, retry);
        }
    }

    /**
     * Sends the removal of {@code entry} in the background until it succeeds, doubling the pause after each
     * failure up to a renewal interval. A fail-open entry's removal is given up once its lease as last
     * confirmed has ended or the template closed: the entry then expires by itself. A fail-closed entry never
     * expires, so its removal goes on, after close() too, for as long as this process lives (it is counted from
     * its start, which keeps the threads alive until it lands).
     */
    void retryRemoval(Acquisition entry, Supplier<?> removal, RuntimeException failure) {
        scheduleRemoval(entry, removal, MIN_RETRY, failure);
    }

    /** {@code failure}: why the last attempt failed, for the log (the stack trace is logged at debug). */
    private void scheduleRemoval(Acquisition entry, Supplier<?> removal, Duration pause, RuntimeException failure) {
        if (!entry.failClosed() && (closed || System.nanoTime() - entry.confirmedUntilNanos() >= 0)) {
            log.warn("Gave up removing {} ({}); it expires with its lease", entry, failure.toString());
            removed(entry);
            return;
        }
        Duration next = pause.compareTo(entry.renewalInterval(interval)) > 0 ? entry.renewalInterval(interval) : pause;
        log.warn("Could not remove {} ({}); retrying in {} ms", entry, failure.toString(), next.toMillis());
        if (workers.schedule(() -> dispatchRemoval(entry, removal, next), next.toNanos()) == null) {
            // Only once nothing is pending, so never for a fail-closed entry, which keeps the threads.
            log.warn("Template closed: {} expires with its lease", entry);
        }
    }

    /**
     * For a fail-closed entry whose enqueue had an attempt that got no answer: DynamoDB may apply that attempt after
     * the entry has left the queue, adding it again with a new ticket, and nobody would renew or remove it (being
     * fail-closed, it would keep the lock until broken). So its removal ({@code removal}, {@code true} if it
     * removed something) is sent again one {@code lease}, one minute and five minutes after it left, each one
     * DynamoDB refuses unless the entry is there, and once more by close(). (A fail-open entry needs none: one
     * added late expires one lease after its attempt was sent, before the first of these.)
     */
    void sweepLater(String what, Duration lease, BooleanSupplier removal) {
        Sweep sweep = new Sweep(what, removal);
        sweeps.add(sweep); // before looking at `closed`, which close() sets before it takes the sweeps: one sees it
        if (closed) {
            if (sweeps.remove(sweep)) {
                sendNow(sweep); // left after the close (a release answered late): once, now
            }
            return;
        }
        List<Duration> delays = List.of(lease, Duration.ofMinutes(1), Duration.ofMinutes(5));
        for (int stage = 0; stage < Sweep.STAGES; stage++) {
            schedule(sweep, stage, delays.get(stage));
        }
    }

    private void schedule(Sweep sweep, int stage, Duration delay) {
        ScheduledFuture<?> scheduled = workers.schedule(() -> sendFromTimer(sweep, stage), delay.toNanos());
        if (scheduled != null) {
            sweep.scheduled.set(stage, scheduled); // a retry takes its stage's place: close() cancels three at most
        }
    }

    /**
     * A timer's sweep. With every request thread busy (a slow region: when enqueues go unanswered), it is tried
     * again shortly. The sweep leaves the pending set only once its last stage (whichever comes last: the lease may
     * be the longest delay) is handed over, so that close() still finds it until then; both may send it, and DynamoDB
     * refuses the second.
     */
    private void sendFromTimer(Sweep sweep, int stage) {
        if (!sweeps.contains(sweep)) {
            return; // close() took it and sent it
        }
        if (!trySend(sweep)) {
            schedule(sweep, stage, Workers.BUSY_RETRY); // none once shut down: close() sent it
        }
        else if (sweep.stagesLeft.decrementAndGet() == 0) {
            sweeps.remove(sweep);
        }
    }

    /**
     * Sends {@code sweep} once on a request thread, in parallel with the others, the threads kept until it is
     * answered; on the calling thread (its interrupt set aside, which the SDK would take for an abort) if none is
     * free.
     */
    private void sendNow(Sweep sweep) {
        if (!trySend(sweep)) {
            boolean interrupted = Thread.interrupted();
            try {
                sweep.once();
            }
            finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /**
     * Sends {@code sweep} on a request thread, counted in {@link #sweepsInFlight} until answered so that the
     * threads (and the client, which its owner closes once they end) stay; {@code false} if no thread was free.
     */
    private boolean trySend(Sweep sweep) {
        synchronized (shutdown) {
            if (shutDown) {
                return false;
            }
            sweepsInFlight.incrementAndGet();
            boolean sent = false;
            try {
                sent = workers.tryRequestOrBusy(() -> {
                    try {
                        sweep.once();
                    }
                    finally {
                        sweepsInFlight.decrementAndGet();
                        shutDownIfDone();
                    }
                }, "a sweep");
            }
            finally {
                if (!sent) {
                    sweepsInFlight.decrementAndGet();
                }
            }
            return sent;
        }
    }

    /** The removals of {@link #sweepLater} of one entry, named {@code what} for the log; equal only to itself. */
    private static final class Sweep {

        /** One lease, one minute and five minutes after the entry left. */
        static final int STAGES = 3;

        private final String what;
        private final BooleanSupplier removal;
        private final AtomicReferenceArray<ScheduledFuture<?>> scheduled = new AtomicReferenceArray<>(STAGES);
        private final AtomicInteger stagesLeft = new AtomicInteger(STAGES);

        Sweep(String what, BooleanSupplier removal) {
            this.what = what;
            this.removal = removal;
        }

        void once() {
            try {
                if (removal.getAsBoolean()) {
                    log.warn("Removed {} again: DynamoDB applied an attempt of its enqueue after it had left the"
                            + " queue", what);
                }
            }
            catch (RuntimeException ex) {
                log.debug("Sweeping a late enqueue of {} failed", what, ex);
            }
        }
    }

    /**
     * Sends a retry in its lock's removal lane, like a first attempt (which blocking releases send on the caller's
     * thread, outside it): when every request thread is busy it keeps its place there.
     */
    private void dispatchRemoval(Acquisition entry, Supplier<?> removal, Duration pause) {
        removals.send(entry.key(), () -> {
            try {
                removal.get();
            }
            catch (RuntimeException ex) {
                log.debug("Retry to remove {} failed", entry, ex);
                scheduleRemoval(entry, removal, pause.multipliedBy(2), ex);
                return;
            }
            removed(entry);
        });
    }

    /** After a failed renewal: sooner than the usual interval, and well before the lease runs out. */
    /**
     * How long a renewal sent with {@code leftNanos} of the lease left may take: a third of that, so that a hung
     * attempt (a dead pooled connection) leaves room for two more while a fresh connection would answer in
     * milliseconds; at least {@link #MIN_RETRY} (but never past the lease), at most a renewal interval.
     */
    private Duration renewalTimeout(Acquisition entry, long leftNanos) {
        long bound = Math.min(Math.max(leftNanos / 3, MIN_RETRY.toNanos()), entry.renewalInterval(interval).toNanos());
        return Duration.ofNanos(Math.max(1_000_000, Math.min(bound, leftNanos)));
    }

    private Duration retryDelay(Acquisition entry) {
        long remaining = entry.confirmedUntilNanos() - System.nanoTime();
        return Duration.ofNanos(Math.max(MIN_RETRY.toNanos(),
                Math.min(entry.renewalInterval(interval).toNanos(), remaining / 4)));
    }

    /**
     * One interval after the request that last confirmed the lease was <em>sent</em>, however long its answer
     * took: the lease runs from the send, so a slow answer must not push the renewal past its end.
     */
    private Duration nextRenewal(Acquisition entry) {
        long confirmedSentAt = entry.confirmedUntilNanos() - entry.lease().toNanos();
        return Duration.ofNanos(Math.max(0, confirmedSentAt + entry.renewalInterval(interval).toNanos() - System.nanoTime()));
    }
}
