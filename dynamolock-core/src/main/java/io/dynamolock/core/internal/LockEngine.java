package io.dynamolock.core.internal;

import io.dynamolock.core.BrokenLock;
import io.dynamolock.core.DynamoLockException;
import io.dynamolock.core.LockAttempt;
import io.dynamolock.core.LockCallback;
import io.dynamolock.core.LockEntryNotFoundException;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockInfo;
import io.dynamolock.core.LockInterruptedException;
import io.dynamolock.core.LockListener;
import io.dynamolock.core.LockLostException;
import io.dynamolock.core.LockMode;
import io.dynamolock.core.LockOptionException;
import io.dynamolock.core.LockQueueFullException;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockScope;
import io.dynamolock.core.LockTableException;
import io.dynamolock.core.LockWaitTimeoutException;
import io.dynamolock.core.QueueSnapshot;
import io.dynamolock.core.WakeUpOptions;
import io.dynamolock.core.WakeUpStats;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Runs acquisitions for one {@code LockTemplate}: enqueue, wait, grant, lexical re-entry,
 * release, and the clean-up of every way an acquisition can fail. Every acquisition waits as a
 * {@link Waiter}, which holds no thread; a blocking {@code acquire} is that same wait plus the calling
 * thread waiting for its outcome. Internal: use {@code LockTemplate}.
 */
public final class LockEngine {

    private static final Logger log = LoggerFactory.getLogger(LockEngine.class);

    final LockSettings settings;
    final QueueTable table;
    final Handoff handoff = new Handoff();
    final Workers workers = new Workers();
    /**
     * When a waiter last logged a failed request with its stack trace: at most once a minute per template, as in an
     * outage or under throttling every waiter fails poll after poll ({@link #failedRequestWarningDue}).
     */
    private final AtomicLong failedRequestWarnedAt = new AtomicLong(System.nanoTime() - FAILED_REQUEST_WARNINGS);
    private static final long FAILED_REQUEST_WARNINGS = TimeUnit.MINUTES.toNanos(1);
    final WaitLoop waitLoop;
    /** Wake-up hints, or {@code null} when they are off. */
    final WakeUps wakeUps;
    /**
     * The dead entries a caller granted beside them purges ({@link Waiter}), each claimed once in this template, so
     * that the callers one release lets in send one purge, not one each; entry ids are never reused, so an id stays
     * claimed once its purge applied. The most recent ones only: an older one is at worst purged twice.
     */
    private final Set<String> deadClaimed = Collections.synchronizedSet(Collections.newSetFromMap(
            new LinkedHashMap<>(16, 0.75f, false) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
                    return size() > 1024;
                }
            }));
    /** Locks kept for a minimum hold ({@link #releaseAfter}), and whether each is fail-closed. */
    private final Map<LockHandle, Boolean> heldOn = new ConcurrentHashMap<>();
    private final Leases leases;
    private final LockScopes scopes = new LockScopes();
    private final MultiAcquire multi = new MultiAcquire(this);
    private final Set<Acquisition> live = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    /** Set as close() begins, before the minimum holds it releases: see {@link #releaseAfter}. */
    private volatile boolean closing;

    /**
     * How much rarer waiters poll with wake-up hints on: a release's hint, not the next poll, tells the next
     * waiter, so polls only cover a lost hint or an unreachable port (then a handoff waits up to this many times
     * longer, never for ever).
     */
    static final int HINTED_POLL_FACTOR = 4;

    /** The longest delay the timer is given (about 146 years): any longer one is kept until release or close. */
    private static final Duration MAX_TIMER_DELAY = Duration.ofNanos(Long.MAX_VALUE / 2);

    public LockEngine(DynamoDbClient client, LockSettings settings) {
        this(client, settings, WakeUpOptions.disabled());
    }

    /** @throws LockOptionException if wake-up hints are on and their port cannot be bound */
    public LockEngine(DynamoDbClient client, LockSettings settings, WakeUpOptions wakeUp) {
        this.settings = settings;
        this.wakeUps = wakeUp.enabled() ? openWakeUps(wakeUp, settings) : null;
        this.table = new QueueTable(client, settings.tableName(), settings.heartbeatInterval());
        this.leases = new Leases(table, settings.clock(), settings.heartbeatInterval(), handoff, workers);
        Duration minPoll = settings.minPollInterval();
        if (wakeUps != null) {
            Duration rarer = minPoll.multipliedBy(HINTED_POLL_FACTOR);
            minPoll = rarer.compareTo(settings.maxPollInterval()) > 0 ? settings.maxPollInterval() : rarer;
        }
        this.waitLoop = new WaitLoop(minPoll, settings.maxPollInterval(), wakeUps == null);
    }

    private static WakeUps openWakeUps(WakeUpOptions wakeUp, LockSettings settings) {
        try {
            return new WakeUps(wakeUp, settings.clock());
        }
        catch (LockOptionException ex) {
            throw ex; // names its own option
        }
        catch (java.io.UncheckedIOException | IllegalArgumentException | SecurityException ex) {
            throw new LockOptionException("wakeUp.port", wakeUp.bindAddress() + ":" + wakeUp.port(),
                    "Cannot receive wake-up hints on UDP " + wakeUp.bindAddress() + ":" + wakeUp.port() + " ("
                    + ex.getMessage() + "); choose a free port (0 takes any) and an address of this host");
        }
    }

    /**
     * Completes once this engine is closed and has no more use for its threads or its client: every lease it
     * watched has ended, every entry it enqueued has been removed or given up to its lease, and every fail-closed
     * entry's removal has landed.
     */
    public CompletionStage<Void> terminated() {
        return workers.terminated().minimalCompletionStage();
    }

    /**
     * An enqueue is about to be sent: until it is answered, nothing else keeps the template's threads alive.
     * {@code false} if the template is closed: then it must not be sent, since the template may have terminated.
     */
    boolean enqueuing(Acquisition entry) {
        return leases.enqueuing(entry);
    }

    /** The enqueue failed before anything could land: the entry needs no removal. */
    void notEnqueued(Acquisition entry) {
        leases.removed(entry);
    }

    /** Where other processes send this template's wake-up hints, or {@code null} when they are off. */
    public String wakeUpAddress() {
        return wakeUps == null ? null : wakeUps.address();
    }

    public WakeUpStats wakeUpStats() {
        return wakeUps == null ? WakeUpStats.NONE : wakeUps.stats();
    }

    /**
     * A write of this engine removed entries of {@code key} and returned {@code state}: this JVM's waiters get it
     * at once, and the processes of the entries that may now hold get a wake-up hint.
     */
    void published(LockKey key, QueueState state) {
        handoff.publish(key, state, settings.clock().millis());
        if (wakeUps != null) {
            wakeUps.afterRemoval(key, state.item());
        }
    }

    /** Waits on the calling thread for the outcome of an acquisition that joins what the thread's scope holds. */
    public LockHandle acquire(LockRequest request) {
        return acquire(request, waitOf(request));
    }

    public Optional<LockHandle> tryAcquire(LockRequest request) {
        try {
            return Optional.of(acquire(request, Duration.ZERO));
        }
        catch (LockWaitTimeoutException | LockQueueFullException taken) {
            return Optional.empty(); // a full queue has live entries ahead: the lock is not free either
        }
    }

    /**
     * An acquisition that joins what {@code scope} holds and holds no thread while it waits. The future
     * completes on a request thread (or, if every one is busy, a step thread); completing it from outside
     * (cancel, a time-out) abandons the wait.
     */
    public CompletableFuture<LockHandle> acquireAsync(LockRequest request, LockScope scope) {
        Objects.requireNonNull(scope, "scope must not be null; use LockScope.empty()");
        Duration wait = waitOf(request);
        if (request != null && request.entities().size() > 1) {
            return multi.acquireAsync(request, wait, scope);
        }
        return acquireAsync(request, wait, scope);
    }

    /** One lock, asynchronously, waiting up to {@code wait}. */
    CompletableFuture<LockHandle> acquireAsync(LockRequest request, Duration wait, LockScope scope) {
        LockKey key = keyOf(request);
        LockHandle joined;
        try {
            joined = join(request, key, scope, null);
        }
        catch (LockLostException scopeLost) {
            return CompletableFuture.failedFuture(scopeLost);
        }
        if (joined != null) {
            return CompletableFuture.completedFuture(joined);
        }
        Waiter waiter = begin(request, key, wait, null);
        CompletableFuture<LockHandle> future = new CompletableFuture<>();
        future.whenComplete((lock, ex) -> waiter.abandon(abandonedBy(ex)));
        // Not on the step thread that settles it, while a request thread is free: the code chained to the future
        // runs where it completes.
        waiter.settled().thenAcceptAsync(outcome -> deliver(waiter, outcome, future), workers.requestsOrCaller());
        waiter.start(workers::step);
        return future;
    }

    /** Whether a waiter's failed request may be logged with its stack trace now (once a minute per template). */
    boolean failedRequestWarningDue() {
        long now = System.nanoTime();
        long last = failedRequestWarnedAt.get();
        return now - last >= FAILED_REQUEST_WARNINGS && failedRequestWarnedAt.compareAndSet(last, now);
    }

    /** The calling thread's lexical scope. */
    public LockScope currentScope() {
        return scopes.current();
    }

    /** Runs {@code callback} with {@code lock} in the calling thread's scope, so nested requests join it. */
    public <T, E extends Throwable> T inScope(LockHandle lock, LockCallback<T, E> callback) throws E {
        if (!lock.parts().stream().allMatch(part -> part instanceof Hold hold && hold.engine() == this)) {
            throw new IllegalArgumentException("Not a handle of this LockTemplate: " + lock);
        }
        return scopes.run(lock, callback);
    }

    private LockHandle acquire(LockRequest request, Duration wait) {
        if (request != null && request.entities().size() > 1) {
            return multi.acquire(request, wait, scopes.current());
        }
        return acquireOne(request, wait);
    }

    /** One lock, waiting on the calling thread up to {@code wait}; joins what the thread's scope holds. */
    LockHandle acquireOne(LockRequest request, Duration wait) {
        return acquireOne(request, wait, null);
    }

    /**
     * {@link #acquireOne(LockRequest, Duration)}, whose wait also ends, with {@code abandonedBy}'s reason, once that
     * completes (a part of a lock of several entities whose earlier part was lost meanwhile); {@code null} for none.
     */
    LockHandle acquireOne(LockRequest request, Duration wait, CompletableFuture<RuntimeException> abandonedBy) {
        LockKey key = keyOf(request);
        LockHandle joined = join(request, key, scopes.current(), Thread.currentThread());
        if (joined != null) {
            return joined;
        }
        Waiter waiter = begin(request, key, wait, Thread.currentThread());
        if (abandonedBy != null) {
            abandonedBy.thenAccept(waiter::abandon);
        }
        if (Thread.currentThread().isInterrupted()) {
            waiter.abandon(interrupted(key, new InterruptedException()));
        }
        waiter.start(Runnable::run);
        Waiter.Outcome outcome;
        try {
            outcome = Waits.await(waiter.settled());
        }
        catch (InterruptedException ex) {
            LockInterruptedException reason = interrupted(key, ex);
            waiter.abandon(reason);
            // Not after the step in flight (a poll may take a heartbeat interval), nor a slow removal: at most
            // Waiter.REMOVAL_WAIT. A grant that step brings later is given back when it comes.
            outcome = Waits.awaitUninterruptibly(waiter.settledWithin(Waiter.REMOVAL_WAIT), false);
            if (outcome == null) {
                waiter.settled().thenAccept(late -> withdraw(late, reason));
                outcome = new Waiter.Outcome(null, null, reason, waiter.waited());
            }
            else {
                outcome = withdraw(outcome, reason);
            }
        }
        catch (RuntimeException | Error ex) {
            // The wait itself failed (a pool that could not start a spare worker: OutOfMemoryError): leave the queue
            // and tell the listeners before throwing, or the entry would be granted to nobody and kept renewed.
            // Plainly this time: a managed wait would fail the same way.
            RuntimeException reason = ex instanceof RuntimeException runtime ? runtime
                    : new IllegalStateException("The wait for " + key + " failed: " + ex, ex);
            waiter.abandon(reason);
            Waiter.Outcome left = withdraw(Waits.awaitUninterruptibly(waiter.settled(), false), reason);
            notify(listener -> listener.onFailed(waiter.entry().attempt(), left.waited(), reason));
            throw ex;
        }
        if (outcome.failure() != null && !(outcome.failure() instanceof LockInterruptedException)
                && Thread.currentThread().isInterrupted()) {
            // The SDK aborts the requests of an interrupted thread: report the interruption, not the abort.
            outcome = new Waiter.Outcome(null, null, interrupted(key, new InterruptedException()), outcome.waited());
        }
        return report(waiter, outcome);
    }

    /** Hands an asynchronous acquisition's outcome to its future, or back to the queue if nobody wants it. */
    private void deliver(Waiter waiter, Waiter.Outcome outcome, CompletableFuture<LockHandle> future) {
        if (future.isDone()) {
            outcome = withdraw(outcome, abandonedBy(future.handle((lock, ex) -> ex).join()));
        }
        LockHandle lock;
        try {
            lock = report(waiter, outcome);
        }
        catch (RuntimeException | Error ex) {
            future.completeExceptionally(ex);
            return;
        }
        if (!future.complete(lock)) {
            lock.release(); // cancelled between the check and now: give the lock to the next in line
        }
    }

    /**
     * A grant that came too late for its caller is given back, the removal sent in the background (the caller may
     * be a step thread); anything else stands.
     */
    private Waiter.Outcome withdraw(Waiter.Outcome outcome, RuntimeException reason) {
        if (outcome.granted() == null) {
            return outcome;
        }
        leaveInBackground(outcome.granted());
        return new Waiter.Outcome(null, null, reason, outcome.waited());
    }

    /** Why a caller's future was completed by the caller: what {@code onFailed} reports. */
    private static RuntimeException abandonedBy(Throwable ex) {
        Throwable cause = ex instanceof CompletionException && ex.getCause() != null ? ex.getCause() : ex;
        if (cause instanceof RuntimeException runtime) {
            return runtime;
        }
        CancellationException abandoned = new CancellationException("The caller completed the acquisition's future"
                + (cause == null ? "" : " with " + cause) + "; its entry leaves the queue");
        abandoned.initCause(cause);
        return abandoned;
    }

    /** Tells the listeners how the acquisition ended, on the calling thread, and returns the lock or throws. */
    private LockHandle report(Waiter waiter, Waiter.Outcome outcome) {
        LockKey key = waiter.entry().key();
        LockAttempt attempt = waiter.entry().attempt();
        if (outcome.granted() != null) {
            return granted(outcome.granted(), outcome.waited());
        }
        if (outcome.gaveUp() != null) {
            notify(listener -> listener.onNotAcquired(attempt, outcome.waited()));
            WaitLoop.GaveUp gaveUp = outcome.gaveUp();
            LockWaitTimeoutException timeout = new LockWaitTimeoutException(key.entity(), key.namespace(),
                    outcome.waited(), gaveUp.position(), gaveUp.ownersAhead(),
                    silentHint(key, gaveUp, selfWaitHint(key, waiter.entry().acquiredBy())));
            if (gaveUp.lastFailure() != null) {
                timeout.initCause(gaveUp.lastFailure());
            }
            throw timeout;
        }
        notify(listener -> listener.onFailed(attempt, outcome.waited(), outcome.failure()));
        throw outcome.failure();
    }

    /**
     * What a caller that timed out behind silent fail-closed entries should know: more wait helps only if their
     * processes resume, a break otherwise; followed by {@code otherHint}, if any.
     */
    private static String silentHint(LockKey key, WaitLoop.GaveUp gaveUp, String otherHint) {
        // An unreadable ticket (an item edited by hand) reads as 0, which no break can name.
        List<QueueState.Entry> silent = gaveUp.silent().stream()
                .filter(e -> e.ticket() != QueueState.UNREADABLE_TICKET).toList();
        long unreadable = gaveUp.silent().size() - silent.size();
        String hint = null;
        if (!silent.isEmpty()) {
            boolean one = silent.size() == 1;
            List<String> each = silent.stream().map(e -> e.ticket() + " of " + Printable.escape(e.owner())).toList();
            String named = one ? each.get(0) : String.join(", ", each.subList(0, each.size() - 1)) + " and "
                    + each.get(each.size() - 1);
            Instant since = Instant.ofEpochMilli(silent.stream()
                    .mapToLong(e -> e.expiresAtMillis() - e.failClosedLeaseMillis()).max().orElseThrow());
            hint = "The fail-closed " + (one ? "entry with ticket " : "entries with tickets ") + named
                    + (one ? " has" : " have") + " not been renewed since " + since + ": "
                    + (one ? "it never expires" : "they never expire") + ". If "
                    + (one ? "its process is" : "their processes are") + " dead, break " + (one ? "it" : "them")
                    + ": LockTemplate.breakLock(" + Printable.javaLiteral(key.entity()) + ", "
                    + Printable.javaLiteral(key.namespace()) + ", "
                    + (one ? silent.get(0).ticket() + ")" : "ticket) for each,") + " or the actuator endpoint's"
                    + " DELETE (README: Runbook)" + (gaveUp.silentEnough() ? "" : "; live entries keep it out as well")
                    + "; if " + (one ? "it is" : "they are") + " alive, raise the wait.";
        }
        if (unreadable > 0) {
            boolean one = unreadable == 1;
            String byHand = unreadable + " silent fail-closed " + (one ? "entry has" : "entries have")
                    + " a ticket that is not an integer below 2^63 (an item edited by hand?), shown as ticket 0: no"
                    + " break can name " + (one ? "it" : "them") + "; if " + (one ? "its process is" : "their processes"
                    + " are") + " dead, remove " + (one ? "it" : "them") + " with the AWS CLI (README: Runbook)"
                    + (silent.isEmpty() && !gaveUp.silentEnough() ? "; live entries keep it out as well" : "") + ".";
            hint = hint == null ? byHand : hint + " " + byHand;
        }
        if (hint == null) {
            return otherHint;
        }
        return otherHint == null ? hint : hint + " " + otherHint;
    }

    public List<LockInfo> activeLocks() {
        return live.stream()
                .filter(Acquisition::isLive)
                .map(e -> new LockInfo(e.key().entity(), e.key().namespace(), e.owner(), e.id(), e.ticket(),
                        e.phase() == Acquisition.Phase.HELD, e.since(), e.mode()))
                .toList();
    }

    public QueueSnapshot queue(String entity, String namespace) {
        LockKey key = new LockKey(Keys.requireEntity(entity), Keys.requireNamespace(namespace, "namespace"));
        return table.read(key).toSnapshot(key.entity(), key.namespace());
    }

    /**
     * Removes the entry with {@code ticket} from the queue, whoever holds it, and hands the new state to this
     * JVM's waiters as a release would.
     */
    public BrokenLock breakLock(String entity, String namespace, long ticket) {
        LockKey key = new LockKey(Keys.requireEntity(entity), Keys.requireNamespace(namespace, "namespace"));
        if (ticket <= 0) {
            throw new IllegalArgumentException("ticket " + ticket + " is not a ticket of any lock: tickets are"
                    + " positive. Copy it from the lock's queue (LockTemplate.queue, or GET /actuator/dynamolock/"
                    + "{entity})");
        }
        QueueState seen = table.read(key);
        QueueState.Entry found = seen.entryWithTicket(ticket);
        QueueTable.Broken broken = found == null ? null : table.breakEntry(key, found, settings.clock().millis());
        if (broken == null || broken.removed() == null) {
            notify(listener -> listener.onBreakRefused(key.entity(), key.namespace(), ticket));
            QueueState now = broken == null ? seen : broken.written().state();
            throw new LockEntryNotFoundException("No entry with ticket " + ticket + " in the queue of " + key
                    + " in table '" + settings.tableName() + "'; the queue holds " + now.entries().stream()
                    .map(e -> e.ticket() + " (" + Printable.escape(e.owner()) + ")").toList()
                    + ". It was released or broken"
                    + " meanwhile, or the ticket is wrong; nothing was removed by this answer (if the request was"
                    + " retried after a lost answer, its first attempt may have removed it: check the queue)");
        }
        QueueState after = broken.written().state();
        handoff.publish(key, after, settings.clock().millis());
        if (wakeUps != null) {
            wakeUps.afterBreak(key, after.item(), ticket);
        }
        // As the write removed it, not as read before: its holder may have renewed it in between.
        QueueState.Entry entry = broken.removed();
        live.stream().filter(own -> own.id().equals(entry.id())).findFirst().ifPresent(own -> {
            // Ours: its holder or waiter learns it now, not at its next heartbeat.
            own.markLost("broken by an operator with breakLock in this process");
            leases.stop(own);
        });
        BrokenLock result = new BrokenLock(key.entity(), key.namespace(), QueueState.toSnapshotEntry(entry));
        log.warn("Broke the queue entry with ticket {} of {}: owner '{}', {}, lease ending {}", ticket, key,
                Printable.escape(entry.owner()), entry.failClosed() ? "fail-closed" : "fail-open",
                result.entry().leaseExpiresAt());
        notify(listener -> listener.onBroken(result));
        return result;
    }

    public void close() {
        // First, while requests still go out: a fail-closed lock kept for a minimum hold would never expire. A
        // releaseAfter() racing with this loop sees closing and releases its lock itself.
        closing = true;
        heldOn.forEach((lock, failClosed) -> {
            if (heldOn.remove(lock) != null && failClosed) {
                releaseQuietly(lock);
            }
        });
        closed = true;
        leases.close();
        handoff.wakeAll();
        if (wakeUps != null) {
            wakeUps.close();
        }
    }

    LockKey keyOf(LockRequest request) {
        if (request == null) {
            throw new IllegalArgumentException("request must not be null");
        }
        if (closed) {
            throw new IllegalStateException("This LockTemplate is closed; build a new one");
        }
        String namespace = request.namespace() == null ? settings.defaultNamespace() : request.namespace();
        return new LockKey(Keys.requireEntity(request.entity()), Keys.requireNamespace(namespace, "namespace"));
    }

    /**
     * Joins the lock if {@code scope} holds it (R10); never for a non-reentrant request. {@code null} if the
     * request must queue.
     *
     * @param joinedBy the thread that will hold the join, {@code null} for an asynchronous request
     */
    private LockHandle join(LockRequest request, LockKey key, LockScope scope, Thread joinedBy) {
        Acquisition held = joinable(request, key, scope);
        if (held == null) {
            return null;
        }
        if (held.join()) {
            Hold hold = new Hold(held, this);
            if (joinedBy == null || joinedBy != held.acquiredBy() || !request.threadBound()) {
                hold.releasedElsewhere(); // not necessarily by the entry's thread: it keeps the entry renewed
            }
            return hold;
        }
        requireNotLost(key, held);
        return null; // the scope's hold was released meanwhile: queue as anyone would
    }

    /**
     * What {@link #join} and {@link #begin} would refuse, checked for one part of a request for several entities
     * before any part is sent: else the request would first queue for, and hold, the parts before it.
     *
     * @param acquiredBy the waiting thread, {@code null} for an asynchronous request
     */
    void refuseBeforeSending(LockRequest request, Duration wait, LockScope scope, Thread acquiredBy) {
        LockKey key = keyOf(request);
        Acquisition held = joinable(request, key, scope);
        if (held != null) {
            requireNotLost(key, held);
            return;
        }
        leaseOf(request, key);
        if (acquiredBy != null && !wait.isZero()) {
            refuseWaitingForOwnThreadBoundHold(key, acquiredBy);
        }
    }

    /** Whether a request for one lock made with {@code scope} would join what the scope holds. */
    boolean scopeHolds(LockScope scope, LockRequest request) {
        return joinable(request, keyOf(request), scope) != null;
    }

    /**
     * The entry of {@code key} that {@code scope} holds and {@code request} may join, or {@code null} if the
     * request must queue; refuses a join that would break the lock's rules.
     */
    private Acquisition joinable(LockRequest request, LockKey key, LockScope scope) {
        Acquisition held = request.reentrant() ? find(scope, key) : null;
        if (held == null || held.phase() == Acquisition.Phase.RELEASED) {
            return null; // nothing held, or released meanwhile: queue as anyone would, with this request's options
        }
        if (request.mode() == LockMode.EXCLUSIVE && held.mode() == LockMode.SHARED) {
            // Joining would let a writer in beside other readers; queueing would wait behind our own hold for ever.
            throw new LockOptionException("mode", request.mode(), "This EXCLUSIVE request for " + key + " was made"
                    + " inside a scope that holds the lock SHARED: it cannot join a shared hold, and queued it would"
                    + " wait behind that hold for ever. Take the lock EXCLUSIVE in the outer scope (a SHARED request"
                    + " inside it joins), or make this request SHARED");
        }
        if (request.failClosed() && !held.failClosed()) {
            // Joined, its work would run under a fail-open entry, passed on one lease after a crash.
            throw new LockOptionException("failClosed", true, "This fail-closed request for " + key + " was made"
                    + " inside a scope that holds the lock fail-open: joined, its work would run under a fail-open"
                    + " entry, passed to the next caller one lease after a crash; queued, it would wait behind its own"
                    + " hold. Take the lock fail-closed in the outer scope (a fail-open request inside it joins), or"
                    + " make this request fail-open");
        }
        if (request.permits() != held.permits()) {
            throw new LockOptionException("permits", request.permits(), "This request for " + key + " asks for"
                    + " permits " + request.permits() + " inside a scope that holds the lock with permits "
                    + held.permits() + "; every request for one lock must ask for the same permits");
        }
        return held;
    }

    private static void requireNotLost(LockKey key, Acquisition held) {
        if (held.phase() == Acquisition.Phase.LOST || !held.isValid() && held.phase() == Acquisition.Phase.HELD) {
            // Granted: the scope's hold ran work, whatever this request's fate.
            throw new LockLostException("This request was made inside a scope holding the lock " + key + ", but its"
                    + " lease was lost (" + held.lostReason() + "); end that scope before acquiring again");
        }
    }

    /**
     * The innermost entry of {@code key} that {@code scope} holds through this engine, or {@code null}. A handle of
     * the scope that was released holds nothing, though a join of it may still keep its entry.
     */
    private Acquisition find(LockScope scope, LockKey key) {
        for (LockHandle lock : scope.locks()) {
            for (LockHandle part : lock.parts()) {
                if (part instanceof Hold hold && hold.engine() == this && hold.entry().key().equals(key)
                        && !hold.released()) {
                    return hold.entry();
                }
            }
        }
        return null;
    }

    /**
     * The rules a request's lease and namespace must keep with this template, {@code null} for one not set: what
     * every acquire checks, and what {@code LockTemplate.checkOptions} lets a caller check ahead.
     */
    public void checkOptions(Duration lease, String namespace) {
        if (lease != null) {
            LockSettings.requireLease(lease, "lease");
            LockSettings.requireLeaseLongerThanHeartbeat(lease, settings.heartbeatInterval());
        }
        if (namespace != null) {
            Keys.requireNamespace(namespace, "namespace");
        }
    }

    private Duration waitOf(LockRequest request) {
        return request == null || request.waitTime() == null ? settings.defaultWait()
                : Waits.requireValid(request.waitTime(), "wait");
    }

    /** A new entry and its waiter, not started; tells the listeners on the calling thread. */
    private Waiter begin(LockRequest request, LockKey key, Duration wait, Thread acquiredBy) {
        Duration lease = leaseOf(request, key);
        if (acquiredBy != null && !wait.isZero()) {
            refuseWaitingForOwnThreadBoundHold(key, acquiredBy);
        }
        long start = System.nanoTime();
        Acquisition entry = new Acquisition(key, settings.ownerName(), lease, request.failClosed(), request.mode(),
                request.permits(), acquiredBy, request.threadBound(), leases.callbacks(),
                leases.reactions());
        notify(listener -> listener.onAcquiring(entry.attempt()));
        return new Waiter(this, entry, start, Waits.deadline(start, wait));
    }

    /**
     * The lease of a new entry for {@code request}; refuses options this template cannot serve (a lease not longer
     * than the heartbeat, more permits than the queue may hold) before anything is sent.
     */
    private Duration leaseOf(LockRequest request, LockKey key) {
        Duration lease = request.lease() == null ? settings.lease() : request.lease();
        checkOptions(lease, null);
        if (request.permits() > settings.maxQueueLength()) {
            throw new LockOptionException("permits", request.permits(), "A request for " + key + " with permits "
                    + request.permits() + " on a template with maxQueueLength " + settings.maxQueueLength()
                    + ": the queue may hold fewer entries than there are permits, so callers would be refused while"
                    + " permits are free. Raise maxQueueLength to at least " + request.permits()
                    + ", or ask for fewer permits");
        }
        return lease;
    }

    /**
     * A thread that holds a lock only it may release would wait behind itself for ever: refused before anything is
     * sent.
     */
    private void refuseWaitingForOwnThreadBoundHold(LockKey key, Thread thread) {
        List<Acquisition> own = live.stream().filter(held -> held.key().equals(key) && held.threadBound()
                && held.acquiredBy() == thread && held.phase() == Acquisition.Phase.HELD).toList();
        // A semaphore's next permit waits for others only, unless every permit is the thread's own; any other
        // request could wait behind the thread's hold.
        if (!own.isEmpty() && own.size() >= own.get(0).permits()) {
            throw new IllegalStateException("The calling thread holds lock " + key + " already, through a lock only it"
                    + " may release (ticket " + own.get(0).ticket() + ", e.g. a LockRegistry lock), so this request"
                    + " could wait for itself for ever. Release that lock first, or take this lock before it");
        }
    }

    /**
     * The entry is in the queue as {@code state} shows: count it live, refuse a queue that is too long (the
     * caller then removes the entry), start its lease, and if it will wait, tell the holders of it for their
     * hand-over.
     */
    void admit(Acquisition entry, QueueState state, boolean mayWait) {
        live.add(entry);
        // Only live entries count: a crashed process's leftovers are purged by the waiters behind them.
        long liveEntries = state.liveAt(settings.clock().millis());
        if (liveEntries > settings.maxQueueLength()) {
            throw new LockQueueFullException("The queue of " + entry.key() + " holds " + liveEntries
                    + " live entries, more than maxQueueLength " + settings.maxQueueLength()
                    + "; raise it, or lock more finely");
        }
        leases.start(entry);
        if (!mayWait || state.holds(state.entry(entry.id()))) {
            return;
        }
        if (wakeUps != null && wakeUps.handsOver()) {
            // The holders' hand-over should include us: they may have seen no state that shows us.
            handoff.enqueued(entry.key(), state, settings.clock().millis());
            wakeUps.afterEnqueue(entry.key(), state, entry.id());
        }
        String hint = selfWaitHint(entry.key(), entry.acquiredBy());
        if (hint != null) {
            log.warn("Waiting for {} behind this thread's own hold. {}", entry.key(), hint);
        }
    }

    boolean isClosed() {
        return closed;
    }

    /**
     * Why a wait may never end on its own: {@code thread}, blocked in {@code acquire()}, holds the same lock
     * through a handle it took with {@code acquire()} and has not released, so it waits behind itself.
     * {@code null} if it does not, or if no thread is blocked (an asynchronous acquisition).
     */
    private String selfWaitHint(LockKey key, Thread thread) {
        if (thread == null) {
            return null;
        }
        return live.stream()
                .filter(e -> e.key().equals(key) && e.acquiredBy() == thread && e.phase() == Acquisition.Phase.HELD
                        && !keptForMinimumHold(e))
                .findFirst()
                .map(e -> "The lock is held by a handle this thread took with acquire() (ticket " + e.ticket()
                        + ") and has not released: such a handle is not re-entrant, it belongs to the handle, not to"
                        + " the thread. Release it first, or take the lock with execute() and nest this call in its"
                        + " callback, where it joins the lock.")
                .orElse(null);
    }

    /**
     * Whether every hold of {@code entry} left is kept for a minimum hold, which the template's timer releases (a
     * job's next tick waiting behind it is no self-wait): the entry's own handle, holds that joined it (R10), parts
     * of locks of several entities. A handle the thread still holds besides them is a self-wait.
     */
    private boolean keptForMinimumHold(Acquisition entry) {
        long kept = heldOn.keySet().stream().flatMap(lock -> lock.parts().stream())
                .filter(part -> part instanceof Hold hold && hold.entry() == entry && !hold.released()).count();
        return kept > 0 && kept >= entry.holdCount();
    }

    /**
     * Whether a failed request may still have been applied: anything but a refusal by the service. A throttled
     * answer counts as maybe applied: the SDK may have retried after an earlier attempt landed and lost its answer.
     */
    static boolean mayHaveLanded(RuntimeException ex) {
        if (ex instanceof LockTableException || ex instanceof LockOptionException) {
            return false; // refused before anything was written (a missing table, permits of another number)
        }
        if (ex instanceof LockQueueFullException && ex.getCause() instanceof AwsServiceException) {
            return false;
        }
        return !(ex instanceof AwsServiceException service) || service.statusCode() >= 500
                || service.isThrottlingException();
    }

    private static LockInterruptedException interrupted(LockKey key, InterruptedException ex) {
        Thread.currentThread().interrupt();
        return new LockInterruptedException("Interrupted while waiting for " + key + "; its entry leaves the queue",
                ex);
    }

    private LockHandle granted(Acquisition entry, Duration waited) {
        LockHandle hold = new Hold(entry, this);
        entry.handedOutAs(hold);
        try {
            entry.onLost(lost -> {
                log.warn("Lease lost: {} ({})", lost, lost.lostReason());
                notify(listener -> listener.onLost(hold));
            });
            notify(listener -> listener.onAcquired(entry.attempt(), hold, waited));
        }
        catch (Error ex) {
            leave(entry); // an Error escaped a listener: the caller gets no handle, so nobody could release it
            throw ex;
        }
        return hold;
    }

    /**
     * {@link LockHandle#releaseAfter}: releases {@code lock} once {@code delay} has passed, on a request thread; at
     * once if the delay is over or the lock not valid. After {@link #close}, only a fail-closed lock is released
     * (at once): a fail-open one expires with its lease.
     */
    void releaseAfter(LockHandle lock, boolean failClosed, Duration delay) {
        Objects.requireNonNull(delay, "delay must not be null");
        if (delay.isNegative() || delay.isZero()) {
            // On the caller's thread: a caller that reports a loss after releasing (QueueLockedInterceptor) relies on
            // the release having been answered when this returns.
            lock.release();
            return;
        }
        if (!lock.isValid()) {
            // Lost or released already: a caller that asked for a delay expects to return at once (a reactive
            // completion, an event loop), not to wait for DynamoDB's answer to the removal.
            lock.releaseAsync();
            return;
        }
        // The timer releases it: a thread-bound entry stays renewed after its thread ended.
        lock.parts().forEach(part -> {
            if (part instanceof Hold hold) {
                hold.releasedElsewhere();
            }
        });
        heldOn.put(lock, failClosed);
        // Checked after the put: a close() that began meanwhile may have passed over this lock.
        if (closing) {
            if (heldOn.remove(lock) != null && failClosed) {
                releaseQuietly(lock); // as close() does
            }
            return;
        }
        // Saturated: a hold of centuries (overflowing nanoseconds) is kept until released or the template closes.
        scheduleRelease(lock, failClosed, delay.compareTo(MAX_TIMER_DELAY) > 0 ? MAX_TIMER_DELAY.toNanos()
                : delay.toNanos());
    }

    /** The release of a minimum hold, on a request thread (never the timer's, which renews every lease). */
    private void scheduleRelease(LockHandle lock, boolean failClosed, long delayNanos) {
        Runnable release = () -> {
            if (heldOn.remove(lock) != null) {
                releaseQuietly(lock);
            }
        };
        ScheduledFuture<?> timer = workers.schedule(() -> {
            if (heldOn.containsKey(lock) && !workers.tryRequestOrBusy(release, "a minimum hold's release")) {
                scheduleRelease(lock, failClosed, Workers.BUSY_RETRY.toNanos());
            }
        }, delayNanos);
        if (timer == null && heldOn.remove(lock) != null && failClosed) {
            releaseQuietly(lock); // shut down meanwhile, as close() does
        }
    }

    private static void releaseQuietly(LockHandle lock) {
        try {
            lock.release();
        }
        catch (RuntimeException ex) {
            log.warn("Releasing {} after its minimum hold failed; it is retried or expires as any release", lock, ex);
        }
    }

    /** Gives up one hold; the last hold takes the entry out of the queue. */
    void release(Hold hold) {
        Acquisition entry = hold.entry();
        if (!entry.dropHold()) {
            hold.forgetLostCallbacks();
            return;
        }
        Duration held = Duration.ofNanos(System.nanoTime() - entry.grantedAtNanos());
        // A loss found by the release itself is reported as a loss, by the lost-lease callback of granted().
        if (leave(entry) == Acquisition.Phase.HELD && !entry.wasLost()) {
            released(hold, held);
        }
    }

    /**
     * {@link #release}, its removal sent in the {@link RemovalLane} rather than on the calling thread
     * ({@code LockHandle.releaseAsync}): the lock is given up in this JVM at once; listeners hear of the release,
     * and the future completes, once the removal was answered.
     */
    CompletableFuture<Void> releaseInBackground(Hold hold) {
        Acquisition entry = hold.entry();
        if (!entry.dropHold()) {
            hold.forgetLostCallbacks();
            return CompletableFuture.completedFuture(null);
        }
        Duration held = Duration.ofNanos(System.nanoTime() - entry.grantedAtNanos());
        // A hold's entry was granted: held, or lost already, which the loss reports, as release() reports it.
        return leaveInBackground(entry, () -> {
            if (!entry.wasLost()) {
                released(hold, held);
            }
        });
    }

    private void released(Hold hold, Duration held) {
        // The handle onAcquired named, not a re-entry's that outlived it: listeners pair the two.
        Acquisition entry = hold.entry();
        LockHandle granted = entry.handle() == null ? hold : entry.handle();
        notify(listener -> listener.onReleased(granted, held));
    }

    /**
     * Takes the entry out of the queue and hands the resulting state to this JVM's waiters. Runs with the
     * thread's interrupt status cleared, since the SDK aborts requests of interrupted threads; if the
     * request fails, it is retried in the background until the lease would have run out anyway.
     */
    Acquisition.Phase leave(Acquisition entry) {
        return leave(entry, Runnable::run);
    }

    /** Whether this caller may purge the dead entry {@code id} beside it: none of the template's has yet. */
    boolean claimDead(String id) {
        return deadClaimed.add(id);
    }

    /** A claimed purge that did not apply: another caller may try. */
    void unclaimDead(String id) {
        deadClaimed.remove(id);
    }

    /**
     * {@link #leave}, the removal sent on a request thread: for a waiter that leaves (cancelled, timed out, failed),
     * whose step thread serves the template's other waiters and must not wait for a slow answer, nor its caller. A
     * failed removal is retried as a release's is. It waits its turn in the {@link RemovalLane}: a few lanes of
     * request threads, one per lock, so that slow removals leave the rest to renewals (R12) and hold up no other
     * lock's. The future completes once the removal was answered (or failed, and is retried in the background).
     */
    CompletableFuture<Void> leaveInBackground(Acquisition entry) {
        return leaveInBackground(entry, () -> { });
    }

    /**
     * {@link #leaveInBackground(Acquisition)}, then {@code afterAnswer} once the removal was answered. Both, and the
     * code callers chain to the future, run after the removal's lane slot is free: they are the caller's code.
     */
    private CompletableFuture<Void> leaveInBackground(Acquisition entry, Runnable afterAnswer) {
        CompletableFuture<Void> answered = new CompletableFuture<>();
        Acquisition.Phase previous = leave(entry, removal -> leases.removals().send(entry.key(), removal, () -> {
            try {
                afterAnswer.run();
            }
            finally {
                answered.complete(null);
            }
        }));
        if (previous == Acquisition.Phase.RELEASED) {
            answered.complete(null); // left already: nothing sent
        }
        return answered;
    }

    /** The bookkeeping of a leave on the calling thread, at once; the removal on {@code sender}. */
    private Acquisition.Phase leave(Acquisition entry, Executor sender) {
        Acquisition.Phase previous = entry.markReleased();
        if (previous == Acquisition.Phase.RELEASED) {
            return previous;
        }
        leases.leaving(entry);
        handoff.unregister(entry);
        live.remove(entry);
        if (wakeUps != null) {
            wakeUps.unregister(entry.id());
            if (previous == Acquisition.Phase.HELD) {
                QueueState handedOver = wakeUps.handOver(entry.key(), entry.known(), entry.id());
                if (handedOver != null) {
                    handoff.handOver(entry.key(), handedOver);
                }
            }
        }
        PredictivePolling.History released = entry.releaseHistory(previous, settings.clock().millis());
        sender.execute(() -> sendRemoval(entry, previous, released));
        return previous;
    }

    private void sendRemoval(Acquisition entry, Acquisition.Phase previous, PredictivePolling.History released) {
        boolean interrupted = Thread.interrupted();
        try {
            QueueTable.Written removed = remove(entry, released);
            sweepIfEnqueueMayLandLate(entry); // before removed(), which may end the template's threads
            leases.removed(entry);
            if (previous == Acquisition.Phase.HELD && !removed.applied() && removed.firstAttempt()) {
                // Gone before this release, and no heartbeat had told us: another process purged it (this JVM
                // paused past the lease) or an operator broke it. Whoever came next may have held meanwhile.
                entry.lostAtRelease("its queue entry was gone when it was released: purged by another process after"
                        + " its lease expired, or broken by an operator");
            }
        }
        catch (RuntimeException ex) {
            log.debug("Removing {} failed", entry, ex);
            // The sweeps count from when the entry left, i.e. when a retry lands; registered before the retry
            // reports it removed, which may end the template's threads.
            leases.retryRemoval(entry, () -> {
                QueueTable.Written removed = remove(entry, released);
                sweepIfEnqueueMayLandLate(entry);
                return removed;
            }, ex);
        }
        finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * A fail-closed entry whose enqueue had an attempt that got no answer: DynamoDB may still apply it and add the
     * entry again, for nobody; its removal is sent again later ({@link Leases#sweepLater}).
     */
    private void sweepIfEnqueueMayLandLate(Acquisition entry) {
        if (!entry.failClosed() || !entry.enqueueCanLandLate()) {
            return;
        }
        // Only what the removal needs: the entry itself, with its states and callbacks, may be collected.
        LockKey key = entry.key();
        String id = entry.id();
        leases.sweepLater(entry.toString(), entry.lease(), () -> {
            QueueTable.Written removed = table.remove(key, id, true, settings.clock().millis(), null);
            published(key, removed.state());
            return removed.applied();
        });
    }

    private QueueTable.Written remove(Acquisition entry, PredictivePolling.History released) {
        QueueTable.Written removed = table.remove(entry.key(), entry.id(), entry.failClosed(),
                settings.clock().millis(), released);
        published(entry.key(), removed.state());
        return removed;
    }

    private void notify(Consumer<LockListener> event) {
        for (LockListener listener : settings.listeners()) {
            try {
                event.accept(listener);
            }
            catch (RuntimeException ex) {
                log.warn("LockListener {} failed", listener, ex);
            }
        }
    }
}
