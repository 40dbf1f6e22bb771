package io.dynamolock.core.internal;

import io.dynamolock.core.BrokenLock;
import io.dynamolock.core.DynamoLockException;
import io.dynamolock.core.LockCallback;
import io.dynamolock.core.LockEntryNotFoundException;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockInfo;
import io.dynamolock.core.LockInterruptedException;
import io.dynamolock.core.LockListener;
import io.dynamolock.core.LockLostException;
import io.dynamolock.core.LockQueueFullException;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTableException;
import io.dynamolock.core.LockWaitTimeoutException;
import io.dynamolock.core.QueueSnapshot;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Runs acquisitions for one {@code LockTemplate}: enqueue, wait, grant, lexical re-entry,
 * release, and the clean-up of every way an acquisition can fail. Internal: use
 * {@code LockTemplate}.
 */
public final class LockEngine {

    private static final Logger log = LoggerFactory.getLogger(LockEngine.class);

    private final LockSettings settings;
    private final QueueTable table;
    private final Handoff handoff = new Handoff();
    private final Leases leases;
    private final WaitLoop waitLoop;
    private final LockScopes scopes = new LockScopes();
    private final Set<Acquisition> live = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    public LockEngine(DynamoDbClient client, LockSettings settings) {
        this.settings = settings;
        this.table = new QueueTable(client, settings.tableName(), settings.heartbeatInterval());
        this.leases = new Leases(table, settings.clock(), settings.heartbeatInterval(), handoff);
        this.waitLoop = new WaitLoop(table, settings.clock(), handoff, settings.minPollInterval(),
                settings.maxPollInterval());
    }

    public LockHandle acquire(LockRequest request) {
        Duration wait = request == null || request.waitTime() == null ? settings.defaultWait()
                : Waits.requireValid(request.waitTime(), "wait");
        Outcome outcome = acquire(request, wait);
        if (outcome.lock() != null) {
            return outcome.lock();
        }
        WaitLoop.GaveUp gaveUp = outcome.gaveUp();
        LockWaitTimeoutException timeout = new LockWaitTimeoutException(outcome.key().entity(),
                outcome.key().namespace(), outcome.waited(), gaveUp.position(), gaveUp.ownersAhead(),
                selfWaitHint(outcome.key()));
        if (gaveUp.lastFailure() != null) {
            timeout.initCause(gaveUp.lastFailure());
        }
        throw timeout;
    }

    public Optional<LockHandle> tryAcquire(LockRequest request) {
        return Optional.ofNullable(acquire(request, Duration.ZERO).lock());
    }

    /** Runs {@code callback} with {@code lock} in the calling thread's scope, so nested requests join it. */
    public <T, E extends Throwable> T inScope(LockHandle lock, LockCallback<T, E> callback) throws E {
        if (!(lock instanceof Hold hold) || hold.engine() != this) {
            throw new IllegalArgumentException("Not a handle of this LockTemplate: " + lock);
        }
        return scopes.run(hold.entry(), lock, callback);
    }

    /** A lock, or what was ahead when the wait ran out. */
    private record Outcome(LockHandle lock, LockKey key, WaitLoop.GaveUp gaveUp, Duration waited) {
    }

    private Outcome acquire(LockRequest request, Duration wait) {
        LockKey key = keyOf(request);
        Optional<LockHandle> joined = join(request, key);
        if (joined.isPresent()) {
            return new Outcome(joined.get(), key, null, Duration.ZERO);
        }
        long start = System.nanoTime();
        Acquisition entry = newEntry(request, key);
        notify(listener -> listener.onAcquiring(key.entity(), key.namespace()));
        WaitLoop.GaveUp gaveUp;
        try {
            gaveUp = enqueueAndWait(entry, Waits.deadline(start, wait));
            if (gaveUp == null) {
                return new Outcome(granted(entry, start), key, null, null);
            }
        }
        catch (RuntimeException ex) {
            Duration failedAfter = Duration.ofNanos(System.nanoTime() - start);
            notify(listener -> listener.onFailed(key.entity(), key.namespace(), failedAfter, ex));
            throw ex;
        }
        Duration waited = Duration.ofNanos(System.nanoTime() - start);
        notify(listener -> listener.onNotAcquired(key.entity(), key.namespace(), waited));
        return new Outcome(null, key, gaveUp, waited);
    }

    public List<LockInfo> activeLocks() {
        return live.stream()
                .filter(Acquisition::isLive)
                .map(e -> new LockInfo(e.key().entity(), e.key().namespace(), e.owner(), e.id(), e.ticket(),
                        e.phase() == Acquisition.Phase.HELD, e.since()))
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
        QueueState.Entry entry = seen.entryWithTicket(ticket);
        QueueTable.Written broken = entry == null ? null : table.breakEntry(key, entry, settings.clock().millis());
        if (broken == null || !broken.applied()) {
            notify(listener -> listener.onBreakRefused(key.entity(), key.namespace(), ticket));
            QueueState now = broken == null ? seen : broken.state();
            throw new LockEntryNotFoundException("No entry with ticket " + ticket + " in the queue of " + key
                    + " in table '" + settings.tableName() + "'; the queue holds " + now.entries().stream()
                    .map(e -> e.ticket() + " (" + e.owner() + ")").toList() + ". It was released or broken"
                    + " meanwhile, or the ticket is wrong; nothing was removed");
        }
        handoff.publish(key, broken.state());
        live.stream().filter(own -> own.id().equals(entry.id())).findFirst().ifPresent(own -> {
            // Ours: its holder or waiter learns it now, not at its next heartbeat.
            own.markLost("broken by an operator with breakLock in this process");
            leases.stop(own);
        });
        BrokenLock result = new BrokenLock(key.entity(), key.namespace(), QueueState.toSnapshotEntry(entry));
        log.warn("Broke the queue entry with ticket {} of {}: owner '{}', {}, lease ending {}", ticket, key,
                entry.owner(), entry.failClosed() ? "fail-closed" : "fail-open", result.entry().leaseExpiresAt());
        notify(listener -> listener.onBroken(result));
        return result;
    }

    public void close() {
        closed = true;
        leases.close();
        handoff.wakeAll();
    }

    private LockKey keyOf(LockRequest request) {
        if (request == null) {
            throw new IllegalArgumentException("request must not be null");
        }
        if (closed) {
            throw new IllegalStateException("This LockTemplate is closed; build a new one");
        }
        String namespace = request.namespace() == null ? settings.defaultNamespace() : request.namespace();
        return new LockKey(Keys.requireEntity(request.entity()), Keys.requireNamespace(namespace, "namespace"));
    }

    /** Joins the lock if a scope of this thread holds it (R10); never for a non-reentrant request. */
    private Optional<LockHandle> join(LockRequest request, LockKey key) {
        Acquisition held = request.reentrant() ? scopes.find(key) : null;
        if (held == null) {
            return Optional.empty();
        }
        if (held.join()) {
            return Optional.of(new Hold(held, this));
        }
        if (held.phase() == Acquisition.Phase.LOST || !held.isValid() && held.phase() == Acquisition.Phase.HELD) {
            throw new LockLostException("This thread runs inside a scope holding the lock " + key + ", but its lease"
                    + " was lost (" + held.lostReason() + "); end that scope before acquiring again");
        }
        return Optional.empty(); // the scope's hold was released meanwhile: queue as anyone would
    }

    private Acquisition newEntry(LockRequest request, LockKey key) {
        Duration lease = request.lease() == null ? settings.lease() : request.lease();
        LockSettings.requireLease(lease, "lease");
        LockSettings.requireLeaseLongerThanHeartbeat(lease, settings.heartbeatInterval());
        return new Acquisition(key, settings.ownerName(), lease, request.failClosed(), leases.callbacks());
    }

    /**
     * Why a wait may never end on its own: the calling thread holds the same lock through a handle it took
     * with {@code acquire()} and has not released, so it waits behind itself. {@code null} if it does not.
     */
    private String selfWaitHint(LockKey key) {
        Thread self = Thread.currentThread();
        return live.stream()
                .filter(e -> e.key().equals(key) && e.acquiredBy() == self && e.phase() == Acquisition.Phase.HELD)
                .findFirst()
                .map(e -> "The lock is held by a handle this thread took with acquire() (ticket " + e.ticket()
                        + ") and has not released: such a handle is not re-entrant, it belongs to the handle, not to"
                        + " the thread. Release it first, or take the lock with execute() and nest this call in its"
                        + " callback, where it joins the lock.")
                .orElse(null);
    }

    /**
     * Enqueues and waits; {@code null} once granted, else what was ahead. No way out but a grant leaves the
     * entry in the queue.
     */
    private WaitLoop.GaveUp enqueueAndWait(Acquisition entry, long deadlineNanos) {
        if (Thread.currentThread().isInterrupted()) {
            throw interrupted(entry, new InterruptedException());
        }
        boolean queued = false;
        // Registered before the enqueue is sent: a same-JVM release answered in between hands over a state
        // with our entry in it, which counts (R6); states without it are ignored.
        handoff.register(entry);
        try {
            long sentAt = System.nanoTime();
            entry.enqueued(0, sentAt);
            QueueState state = table.enqueue(entry.key(), entry.id(), entry.owner(), settings.clock().millis(),
                    entry.lease(), entry.failClosed());
            QueueState.Entry self = state.entry(entry.id());
            if (self == null) {
                throw new DynamoLockException("Enqueue of " + entry + " returned an item without the entry: " + state);
            }
            entry.enqueued(self.ticket(), sentAt);
            queued = true;
            live.add(entry);
            // Only live entries count: a crashed process's leftovers are purged by the waiters behind them.
            long liveEntries = state.liveAt(settings.clock().millis());
            if (liveEntries > settings.maxQueueLength()) {
                throw new LockQueueFullException("The queue of " + entry.key() + " holds " + liveEntries
                        + " live entries, more than maxQueueLength " + settings.maxQueueLength()
                        + "; raise it, or lock more finely");
            }
            leases.start(entry);
            if (!state.ahead(self.ticket()).isEmpty() && deadlineNanos - sentAt > 0) {
                String hint = selfWaitHint(entry.key());
                if (hint != null) {
                    log.warn("Waiting for {} behind this thread's own hold. {}", entry.key(), hint);
                }
            }
            WaitLoop.GaveUp gaveUp = waitLoop.await(entry, state, deadlineNanos, () -> closed);
            if (gaveUp != null) {
                leave(entry);
            }
            return gaveUp;
        }
        catch (InterruptedException ex) {
            leave(entry);
            throw interrupted(entry, ex);
        }
        catch (RuntimeException ex) {
            if (queued || mayHaveLanded(ex)) {
                // The entry is in the queue (a poll or purge failed, the lease ended, the template closed), or the
                // enqueue may have landed even if its answer was lost: take the entry out again.
                leave(entry);
            }
            if (Thread.currentThread().isInterrupted()) {
                throw interrupted(entry, new InterruptedException());
            }
            throw ex;
        }
        catch (Error ex) {
            leave(entry); // nobody would ever release it, and its lease would be renewed for ever
            throw ex;
        }
        finally {
            handoff.unregister(entry);
        }
    }

    /**
     * Whether a failed request may still have been applied: anything but a refusal by the service. A throttled
     * answer counts as maybe applied: the SDK may have retried after an earlier attempt landed and lost its answer.
     */
    private static boolean mayHaveLanded(RuntimeException ex) {
        if (ex instanceof LockTableException) {
            return false;
        }
        if (ex instanceof LockQueueFullException && ex.getCause() instanceof AwsServiceException) {
            return false;
        }
        return !(ex instanceof AwsServiceException service) || service.statusCode() >= 500
                || service.isThrottlingException();
    }

    private LockInterruptedException interrupted(Acquisition entry, InterruptedException ex) {
        Thread.currentThread().interrupt();
        return new LockInterruptedException("Interrupted while waiting for " + entry.key() + "; left the queue", ex);
    }

    private LockHandle granted(Acquisition entry, long start) {
        if (!entry.granted()) {
            leave(entry);
            throw new LockLostException("The lease of " + entry.key() + " ran out before the lock could be handed"
                    + " over (" + entry.lostReason() + "); it was not granted");
        }
        LockHandle hold = new Hold(entry, this);
        try {
            entry.onLost(lost -> {
                log.warn("Lease lost: {} ({})", lost, lost.lostReason());
                notify(listener -> listener.onLost(hold));
            });
            Duration waited = Duration.ofNanos(System.nanoTime() - start);
            notify(listener -> listener.onAcquired(hold, waited));
        }
        catch (Error ex) {
            leave(entry); // an Error escaped a listener: the caller gets no handle, so nobody could release it
            throw ex;
        }
        return hold;
    }

    /** Gives up one hold; the last hold takes the entry out of the queue. */
    void release(Hold hold) {
        Acquisition entry = hold.entry();
        if (!entry.dropHold()) {
            return;
        }
        Duration held = Duration.ofNanos(System.nanoTime() - entry.grantedAtNanos());
        if (leave(entry) == Acquisition.Phase.HELD) {
            notify(listener -> listener.onReleased(hold, held));
        }
    }

    /**
     * Takes the entry out of the queue and hands the resulting state to this JVM's waiters. Runs with the
     * thread's interrupt status cleared, since the SDK aborts requests of interrupted threads; if the
     * request fails, it is retried in the background until the lease would have run out anyway.
     */
    private Acquisition.Phase leave(Acquisition entry) {
        Acquisition.Phase previous = entry.markReleased();
        if (previous == Acquisition.Phase.RELEASED) {
            return previous;
        }
        leases.stop(entry);
        handoff.unregister(entry);
        live.remove(entry);
        boolean interrupted = Thread.interrupted();
        try {
            remove(entry);
        }
        catch (RuntimeException ex) {
            log.debug("Removing {} failed", entry, ex);
            leases.retryRemoval(entry, () -> remove(entry));
        }
        finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        return previous;
    }

    private QueueState remove(Acquisition entry) {
        QueueState state = table.remove(entry.key(), entry.id(), entry.failClosed(), settings.clock().millis());
        handoff.publish(entry.key(), state);
        return state;
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
