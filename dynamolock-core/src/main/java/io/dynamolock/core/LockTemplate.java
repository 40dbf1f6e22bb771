package io.dynamolock.core;

import io.dynamolock.core.internal.LockEngine;
import io.dynamolock.core.internal.LockSettings;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * FIFO-fair distributed locks on one DynamoDB table: callers of one lock are
 * served in ticket order, wait at most a given time, and a crashed holder is
 * replaced one lease after its last heartbeat, unless its request was
 * {@linkplain LockRequest#failClosed() fail-closed}: then the lock stays taken
 * until someone {@linkplain #breakLock breaks} it. Thread-safe; build one per
 * table and share it.
 *
 * <pre>{@code
 * LockTemplate locks = LockTemplate.builder(dynamoDbClient).tableName("dynamolock").build();
 * locks.execute("order-42", Duration.ofSeconds(60), lock -> {
 *     addItem(order, item, lock.fencingToken());
 *     return null;
 * });
 *
 * try (LockHandle lock = locks.acquire("order-42", Duration.ofSeconds(5))) {
 *     ...
 * }
 * }</pre>
 *
 * <p><b>More than one holder, more than one entity.</b> A request may ask for a {@linkplain LockMode#SHARED shared}
 * hold (readers hold together, writers alone), for {@linkplain LockRequest#permits() N permits} (a semaphore), or for
 * {@linkplain LockRequest#builder(java.util.Collection) several entities} at once (all or nothing, in one canonical
 * order); every operation below takes such requests as it takes a plain one.
 *
 * <p><b>Re-entry is lexical.</b> While a callback of {@code execute} runs, its lock is in the
 * thread's scope: a nested {@code execute} or {@code acquire} of the same lock from within joins it
 * (only the outermost release gives it up). A handle returned by {@code acquire()} belongs to the
 * handle, not to the thread: a later {@code acquire()} of the same lock on the same thread, e.g. the
 * next task of a pooled thread, queues like anyone else (a thread that so waits behind its own
 * handle is logged, and its time-out says so). {@link #inScope} puts such a handle in scope.
 *
 * <p><b>Waiting holds no thread.</b> {@link #acquireAsync} returns a future at once; its polls, wake-ups
 * and time-out are scheduled, so 10,000 acquisitions waiting in one JVM cost a few threads. The blocking
 * {@code acquire}, {@code tryAcquire} and {@code execute} are the same acquisition with the calling thread
 * waiting for its outcome. Code that hops threads carries its {@link LockScope} and passes it to
 * {@link #acquireAsync(LockRequest, LockScope)} to join a lock it holds.
 *
 * <p>{@link #close()} stops the heartbeats of this template; fail-open entries still held then expire after
 * their lease, and their holders are told when they do. Fail-closed ones never expire: release them.
 */
public final class LockTemplate implements LockOperations, AutoCloseable {

    /** A health check's look at the table must not hang for the SDK's retries of an endpoint that never answers. */
    private static final Duration TABLE_CHECK_TIMEOUT = Duration.ofSeconds(10);

    private final LockEngine engine;
    private final LockSettings settings;
    private final TableBootstrap table;

    private LockTemplate(LockSettings settings, DynamoDbClient client, WakeUpOptions wakeUp) {
        this.settings = settings;
        this.engine = new LockEngine(client, settings, wakeUp);
        this.table = TableBootstrap.of(client, settings.tableName()).timeout(TABLE_CHECK_TIMEOUT);
    }

    public static Builder builder(DynamoDbClient dynamoDbClient) {
        return new Builder(dynamoDbClient);
    }

    /**
     * Waits up to {@code wait} for the lock on {@code entity} in the default namespace.
     *
     * @throws LockWaitTimeoutException if the wait ran out first
     */
    @Override
    public LockHandle acquire(String entity, Duration wait) {
        return acquire(LockRequest.builder(entity).wait(wait).build());
    }

    /**
     * Waits for the lock as {@code request} says.
     *
     * @throws LockWaitTimeoutException  if the wait ran out first (also at once with no wait)
     * @throws LockInterruptedException  if the thread was interrupted while waiting
     * @throws LockQueueFullException    if the queue is at its maximum length
     * @throws LockLostException         if the caller's queue entry expired while it waited
     */
    @Override
    public LockHandle acquire(LockRequest request) {
        return engine.acquire(request);
    }

    /**
     * Asks for the lock without blocking the calling thread or holding any thread while it waits. The future
     * completes with the lock, or exceptionally with what {@link #acquire(LockRequest)} throws; cancelling it
     * abandons the wait and leaves no entry behind. Joins no lock. See {@link LockOperations#acquireAsync}.
     */
    @Override
    public CompletableFuture<LockHandle> acquireAsync(LockRequest request) {
        return acquireAsync(request, LockScope.empty());
    }

    /** As {@link #acquireAsync(LockRequest)}, joining the lock if {@code scope} holds it (re-entrant requests). */
    @Override
    public CompletableFuture<LockHandle> acquireAsync(LockRequest request, LockScope scope) {
        return engine.acquireAsync(request, scope);
    }

    /** The locks the calling thread's {@code execute} and {@code inScope} callbacks hold, innermost first. */
    @Override
    public LockScope currentScope() {
        return engine.currentScope();
    }

    /** Takes the lock on {@code entity} if it is free (no live entry ahead), without waiting; else empty. */
    @Override
    public Optional<LockHandle> tryAcquire(String entity) {
        return tryAcquire(LockRequest.of(entity));
    }

    /**
     * Takes the lock if the live entries ahead let it hold (none for an exclusive lock of one permit; fewer than
     * its permits for a semaphore; only readers for a reader), without waiting; the request's wait is ignored.
     */
    @Override
    public Optional<LockHandle> tryAcquire(LockRequest request) {
        return engine.tryAcquire(request.withoutWait());
    }

    /** See {@link LockOperations#execute(LockRequest, LockCallback)}: a lost lease ends in {@link LockLostException}. */
    @Override
    public <T, E extends Throwable> T execute(LockRequest request, LockCallback<T, E> callback) throws E {
        Objects.requireNonNull(callback, "callback must not be null");
        LockHandle lock = acquire(request);
        T result;
        try {
            result = engine.inScope(lock, callback);
        }
        catch (Throwable failure) {
            try {
                LockLostException lost = releaseReportingLoss(lock);
                if (lost != null) {
                    failure.addSuppressed(lost);
                }
            }
            catch (RuntimeException | Error releaseFailure) {
                failure.addSuppressed(releaseFailure); // as try-with-resources would: the callback's comes first
            }
            throw failure;
        }
        LockLostException lost = releaseReportingLoss(lock);
        if (lost != null) {
            throw lost;
        }
        return result;
    }

    /**
     * Releases {@code lock} after its callback: the loss of its lease while the callback ran, or {@code null}. Asked
     * of {@code wasLost()} after the release, which also finds a loss nothing had told this process of, and not of
     * {@code isValid()}, which a callback that released early (done reading) has turned false too.
     */
    private static LockLostException releaseReportingLoss(LockHandle lock) {
        lock.release();
        return lock.wasLost() ? LockLostException.whileRunning(lock, "the callback of execute") : null;
    }

    /**
     * Runs {@code callback} with {@code lock}, a handle of this template, in the calling thread's scope:
     * requests for the same lock made from within join it. Does not release it: for a lock whose hold
     * outlives the call, e.g. one released when a future completes.
     *
     * @throws IllegalArgumentException if {@code lock} was not acquired through this template
     */
    @Override
    public <T, E extends Throwable> T inScope(LockHandle lock, LockCallback<T, E> callback) throws E {
        Objects.requireNonNull(lock, "lock must not be null");
        Objects.requireNonNull(callback, "callback must not be null");
        return engine.inScope(lock, callback);
    }

    /** Runs {@code callback} holding the lock on {@code entity} and releases it however the callback ends. */
    @Override
    public <T, E extends Throwable> T execute(String entity, Duration wait, LockCallback<T, E> callback) throws E {
        return execute(LockRequest.builder(entity).wait(wait).build(), callback);
    }

    /** Calls {@code work} holding the lock on {@code entity} and releases it however the work ends. */
    public <T> T execute(String entity, Duration wait, Callable<T> work) throws Exception {
        Objects.requireNonNull(work, "work must not be null");
        return execute(entity, wait, lock -> work.call());
    }

    /** Runs {@code work} holding the lock on {@code entity} and releases it however the work ends. */
    public void execute(String entity, Duration wait, Runnable work) {
        Objects.requireNonNull(work, "work must not be null");
        execute(entity, wait, lock -> {
            work.run();
            return null;
        });
    }

    /** The locks this template holds or waits for now. */
    @Override
    public List<LockInfo> activeLocks() {
        return engine.activeLocks();
    }

    /** The queue of a lock as stored in DynamoDB now (one strongly consistent read). */
    @Override
    public QueueSnapshot queue(String entity, String namespace) {
        return engine.queue(entity, namespace == null ? settings.defaultNamespace() : namespace);
    }

    /**
     * Breaks a lock on purpose: removes the entry with {@code ticket} from the queue of {@code entity} in
     * {@code namespace} ({@code null} for the default), fail-closed or not, held or waiting. Take the ticket from
     * {@link #queue}: a break removes that entry only, never a newer holder that arrived meanwhile. The next
     * waiter goes ahead; the broken holder, if alive, learns it at its next heartbeat ({@link LockHandle#isValid()}
     * false, {@link LockHandle#onLost} callbacks), and its fencing token is stale from then on. One consistent
     * read and one conditional write; logged at WARN.
     *
     * @return what was removed
     * @throws LockEntryNotFoundException if the queue holds no entry with {@code ticket}; nothing was removed
     * @throws IllegalArgumentException   if the entity, namespace or ticket cannot name an entry
     */
    public BrokenLock breakLock(String entity, String namespace, long ticket) {
        return engine.breakLock(entity, namespace == null ? settings.defaultNamespace() : namespace, ticket);
    }

    public String tableName() {
        return settings.tableName();
    }

    /**
     * Checks options that requests will carry, as an acquire with this template checks them, without sending
     * anything: a lease (positive, at most 365 days, longer than this template's heartbeat interval) and a
     * namespace (not blank, at most 1024 bytes of UTF-8, valid Unicode); {@code null} for one not set. For options
     * known before any call, such as an annotation's, so that they are refused at startup rather than on every call.
     *
     * @throws LockOptionException naming the option, its value and the fix
     */
    public void checkOptions(Duration lease, String namespace) {
        engine.checkOptions(lease, namespace);
    }

    /**
     * This template's lock table as DynamoDB describes it, asked through this template's own client (one
     * {@code DescribeTable} and one {@code DescribeTimeToLive}, 10 s at most): what a health check reports. A
     * missing table or wrong keys are in the status; a table that cannot be reached throws the SDK's error, and a
     * refused permission {@link LockTableAccessDeniedException}.
     */
    public TableBootstrap.Status checkTable() {
        return table.check();
    }

    public String ownerName() {
        return settings.ownerName();
    }

    public String defaultNamespace() {
        return settings.defaultNamespace();
    }

    public Duration leaseDuration() {
        return settings.lease();
    }

    public Duration heartbeatInterval() {
        return settings.heartbeatInterval();
    }

    public Duration defaultWait() {
        return settings.defaultWait();
    }

    /** The most live entries, holders and waiters, a lock's queue may hold; also the most permits a request may ask. */
    public int maxQueueLength() {
        return settings.maxQueueLength();
    }

    /**
     * What this template's wake-up hints did so far: sent, dropped, received, rejected and useful;
     * {@link WakeUpStats#NONE} when they are off.
     */
    public WakeUpStats wakeUpStats() {
        return engine.wakeUpStats();
    }

    /** {@code host:port} where this template receives wake-up hints, or {@code null} when they are off. */
    public String wakeUpAddress() {
        return engine.wakeUpAddress();
    }

    /**
     * Completes once this template is closed and done with its {@code DynamoDbClient}: every lease it watched has
     * ended, every waiter's entry has left the queue, and every fail-closed lock released since the close has been
     * removed (a job that held one through the close and released it after), and every late-enqueue sweep
     * {@code close()} sent has been answered. Whoever owns the client closes it
     * then, not at once: closing it under the template cuts those removals off, and a fail-closed lock released
     * later would stay taken for good. Never completes while a fail-closed lock is held and not released.
     */
    public CompletionStage<Void> terminated() {
        return engine.terminated();
    }

    /**
     * Stops this template's heartbeats and fails its waiters. Locks still held are not released (but for
     * fail-closed ones kept for a {@linkplain LockHandle#releaseAfter minimum hold}), and their handles turn invalid
     * and run their lost-lease callbacks when the lease ends. A fail-open entry then expires, as if the process had
     * died. A fail-closed one never does: release its handle still, and its removal is sent, and retried until it
     * lands, on this template's daemon threads, which outlive the close until then.
     */
    @Override
    public void close() {
        engine.close();
    }

    /**
     * Options of a {@link LockTemplate}; every one has a default but the client.
     */
    public static final class Builder {

        private final DynamoDbClient client;
        private String tableName = "dynamolock";
        private String defaultNamespace = "default";
        private Duration lease = Duration.ofSeconds(60);
        private Duration heartbeatInterval;
        private Duration defaultWait = Duration.ofSeconds(60);
        private String ownerName;
        private Duration minPollInterval = Duration.ofMillis(50);
        private Duration maxPollInterval = Duration.ofSeconds(1);
        private int maxQueueLength = 100;
        private Clock clock = Clock.systemUTC();
        private final List<LockListener> listeners = new ArrayList<>();
        private WakeUpOptions wakeUp = WakeUpOptions.disabled();

        private Builder(DynamoDbClient client) {
            this.client = Objects.requireNonNull(client, "dynamoDbClient must not be null");
        }

        /** The lock table (default {@code dynamolock}); see {@link TableBootstrap} for its shape. */
        public Builder tableName(String tableName) {
            this.tableName = tableName;
            return this;
        }

        /**
         * The lock table as set so far: what a start-up check of the table ({@link TableBootstrap}) looks at before
         * the template is built.
         */
        public String tableName() {
            return tableName;
        }

        /** The namespace of requests that name none (default {@code default}). */
        public Builder defaultNamespace(String defaultNamespace) {
            this.defaultNamespace = defaultNamespace;
            return this;
        }

        /** How long an entry stays valid without a heartbeat (default 60 s). */
        public Builder leaseDuration(Duration lease) {
            this.lease = lease;
            return this;
        }

        /** How often holders and waiters renew their lease (default half the lease). */
        public Builder heartbeatInterval(Duration heartbeatInterval) {
            this.heartbeatInterval = heartbeatInterval;
            return this;
        }

        /** The wait of requests that name none (default 60 s). */
        public Builder defaultWait(Duration defaultWait) {
            this.defaultWait = defaultWait;
            return this;
        }

        /**
         * Names this process in queues, for people: time-out messages, the actuator endpoint (default host and
         * pid). A label only: every acquisition's entry has an identity of its own, so templates that share a
         * name (replicas configured alike) never share an entry.
         */
        public Builder ownerName(String ownerName) {
            this.ownerName = ownerName;
            return this;
        }

        /**
         * The shortest and longest pause between a waiter's reads of the queue (default 50 ms
         * and 1 s). A waiter polls at the shortest interval times its position, capped at the
         * longest, so a long queue costs about as much as a short one.
         */
        public Builder pollInterval(Duration min, Duration max) {
            this.minPollInterval = min;
            this.maxPollInterval = max;
            return this;
        }

        /**
         * The most entries one lock's queue may hold (default 100). The queue lives in one item, and every
         * write and poll of it costs a unit per KB (about 100 bytes per entry): a long queue is costly, and
         * one item holds a few thousand entries at most.
         */
        public Builder maxQueueLength(int maxQueueLength) {
            this.maxQueueLength = maxQueueLength;
            return this;
        }

        /**
         * Wake-up hints between processes (default {@linkplain WakeUpOptions#disabled() off}): a release or purge
         * tells the process of the next holder at once over UDP, instead of leaving it to its next poll. With them
         * on, waiters poll four times less often
         * (still within the poll interval's maximum). Turn them on in every process that uses the table. The
         * template binds its UDP port when built, and releases it when closed.
         */
        public Builder wakeUp(WakeUpOptions wakeUp) {
            this.wakeUp = Objects.requireNonNull(wakeUp, "wakeUp must not be null; use WakeUpOptions.disabled()");
            return this;
        }

        /** Adds a listener of lock events (metrics, logs). */
        public Builder listener(LockListener listener) {
            this.listeners.add(Objects.requireNonNull(listener, "listener must not be null"));
            return this;
        }

        /** The wall clock used for lease expiry times (default UTC system clock). */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /** @throws IllegalArgumentException naming the bad option and the fix */
        public LockTemplate build() {
            Duration heartbeat = heartbeatInterval != null ? heartbeatInterval : (lease == null ? null : lease.dividedBy(2));
            LockSettings settings = new LockSettings(tableName, defaultNamespace, lease, heartbeat, defaultWait,
                    ownerName != null ? ownerName : defaultOwnerName(), minPollInterval, maxPollInterval,
                    maxQueueLength, clock, listeners);
            return new LockTemplate(settings, client, wakeUp);
        }

        private static String defaultOwnerName() {
            String host = System.getenv("HOSTNAME");
            if (host == null || host.isBlank()) {
                try {
                    host = InetAddress.getLocalHost().getHostName();
                }
                catch (Exception ex) {
                    host = "unknown-host";
                }
            }
            return host + ":" + ManagementFactory.getRuntimeMXBean().getPid();
        }
    }
}
