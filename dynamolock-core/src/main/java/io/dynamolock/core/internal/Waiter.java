package io.dynamolock.core.internal;

import io.dynamolock.core.DynamoLockException;
import io.dynamolock.core.LockLostException;
import io.dynamolock.core.LockTableException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * One acquisition from its enqueue to a grant or a give-up, as a state machine that takes one step per event
 * and holds no thread in between: the enqueue's answer, a state offered by a same-JVM release or a heartbeat
 * ({@link Acquisition#offer}), the timer (a poll or the deadline is due), a lost lease, the template closing,
 * or the caller {@linkplain #abandon abandoning} the wait, a wake-up hint from another process ({@link WakeUps}:
 * an authenticated one's state counts as a same-JVM release's, a plain one makes it read at once, once per
 * interval of the poll schedule). {@link WaitLoop} says what each step does.
 *
 * <p>Steps run one at a time: an event only counts itself in {@link #pending}; the event that finds nothing
 * pending hands a drain to a step thread, and the drain takes steps until none is pending. So an event that
 * arrives during a step (a poll in flight, say) is seen by the next one, never lost, and two steps never
 * race. The fields below {@link #pending} are touched by steps only.
 *
 * <p>Every way out but a grant removes the entry. The step that leaves, on a thread shared by the template's
 * waiters, only hands the removal to a request thread; the wait settles once it is answered (or
 * {@link #REMOVAL_WAIT} later at most). One that is granted while the caller abandons the wait is handed back by
 * the caller ({@link LockEngine}), so no entry is left held that nobody owns.
 */
final class Waiter implements WakeUps.Addressee {

    private static final Logger log = LoggerFactory.getLogger(Waiter.class);

    /** How a wait ended: exactly one of granted (the entry, held), gave up, or failed; after {@code waited}. */
    record Outcome(Acquisition granted, WaitLoop.GaveUp gaveUp, RuntimeException failure, Duration waited) {
    }

    /**
     * How long a wait that ended without a grant waits at most for its entry's removal to be answered: DynamoDB
     * answers in milliseconds, so a caller normally finds its entry gone; during a latency spike it is not kept
     * longer, and the removal finishes in the background.
     */
    static final Duration REMOVAL_WAIT = Duration.ofMillis(500);

    /**
     * A poll sent with less of the wait left than this, and cut short by its end, is no failure of the table
     * ({@link #attempt(Supplier, boolean)}): about what one answer and one SDK retry take, not several retries.
     */
    static final Duration DEADLINE_CUT = Duration.ofMillis(500);

    private final LockEngine engine;
    private final Acquisition entry;
    private final long startNanos;
    private final long deadlineNanos;
    private final CompletableFuture<Outcome> settled = new CompletableFuture<>();
    private final AtomicReference<RuntimeException> abandonedBy = new AtomicReference<>();
    private final AtomicInteger pending = new AtomicInteger();
    private QueueState state;
    private boolean queued;
    /** The last request's failure since a good state (ours or handed over): no purge, a whole poll's pause. */
    private RuntimeException failure;
    /** The failure of our own last request, until one succeeds: what a time-out reports as its cause. */
    private RuntimeException lastFailure;
    /** When the next poll goes out, and the prediction it serves (0: the schedule's poll). */
    private long nextPollAt;
    private long nextPollFor;
    /** When the schedule's poll is due: one poll interval after the last poll. */
    private long dueAt;
    private boolean polled = true;
    private final PredictivePolling.Budget predictions = new PredictivePolling.Budget();
    /** A plain wake-up hint arrived since the last step. */
    private final AtomicBoolean hinted = new AtomicBoolean();
    /** The state of the last authenticated hint, to tell a grant it made from others. */
    private volatile QueueState hintedState;
    /** Whether {@link #state} came from an authenticated hint (then a grant on it counts as useful). */
    private boolean stateFromHint;
    /** Whether a plain hint made us read since the last poll already. */
    private boolean hintReadSincePoll;
    private ScheduledFuture<?> timer;
    private boolean finished;
    /** The removal of our entry, once a step sent it: answered when it completes. */
    private CompletableFuture<Void> removal;

    Waiter(LockEngine engine, Acquisition entry, long startNanos, long deadlineNanos) {
        this.engine = engine;
        this.entry = entry;
        this.startNanos = startNanos;
        this.deadlineNanos = deadlineNanos;
        entry.onWake(this::signal);
    }

    Acquisition entry() {
        return entry;
    }

    @Override
    public LockKey key() {
        return entry.key();
    }

    @Override
    public void wokenWith(QueueState hinted) {
        entry.learned(hinted); // waiting or held: who is behind us and who left, for our hand-over
        hintedState = hinted;
        QueueState.Entry self = hinted.entry(entry.id());
        if (self == null || !hinted.blockers(self).hold() || abandonedBy.get() != null || engine.isClosed()
                || entry.phase() != Acquisition.Phase.WAITING) {
            entry.offer(hinted); // as a same-JVM release's: kept only if it holds our entry and is no older
        }
        else if (entry.keepOffered(hinted) && pending.getAndIncrement() == 0) {
            // A state that grants us needs no request: the grant step runs here, on the receiver's thread, one
            // hand-over between threads less on the handoff's path. (If a step is running, it takes the state.)
            // Every way out that sends a request (abandoned, lost, closed) was ruled out just above; one that
            // begins in between, or a lease that ends at the grant, costs other hints that request's time.
            drain();
        }
    }

    @Override
    public void woken() {
        hinted.set(true);
        signal();
    }

    /**
     * Completes once the wait has ended and, unless it was granted, the entry has left the queue: its removal was
     * answered, or failed and is retried in the background. The removal is sent on a request thread
     * ({@link LockEngine#leaveInBackground}), never waited for by a step thread; and when DynamoDB is slow to answer
     * it, this completes {@link #REMOVAL_WAIT} after the wait ended all the same, the removal going on in the
     * background, so that a time-out is reported that late at most.
     */
    CompletableFuture<Outcome> settled() {
        return settled;
    }

    /** {@link #settled}, or {@code null} once {@code timeout} has passed (a step in flight, a slow poll, say). */
    CompletableFuture<Outcome> settledWithin(Duration timeout) {
        CompletableFuture<Outcome> bounded = new CompletableFuture<>();
        ScheduledFuture<?> late = engine.workers.schedule(() -> bounded.complete(null), timeout.toNanos());
        settled.thenAccept(outcome -> {
            bounded.complete(outcome);
            if (late != null) {
                late.cancel(false);
            }
        });
        if (late == null) {
            bounded.complete(settled.getNow(null)); // the timer has shut down
        }
        return bounded;
    }

    /** How long the wait has lasted so far. */
    Duration waited() {
        return Duration.ofNanos(System.nanoTime() - startNanos);
    }

    /**
     * Takes the first step (the enqueue) on {@code first}: the calling thread of a blocking acquire, so a free
     * lock costs no hand-over between threads; a step thread for an asynchronous one.
     */
    void start(Executor first) {
        if (pending.getAndIncrement() == 0) {
            first.execute(this::drain);
        }
    }

    /**
     * Ends the wait with {@code reason} (cancelled, interrupted): the entry leaves the queue at the next step; if
     * the enqueue is in flight, once it has answered. Does nothing once the wait has ended.
     */
    void abandon(RuntimeException reason) {
        if (abandonedBy.compareAndSet(null, reason)) {
            signal();
        }
    }

    private void signal() {
        if (pending.getAndIncrement() == 0) {
            engine.workers.step(this::drain);
        }
    }

    private void drain() {
        int missed = 1;
        do {
            step();
            missed = pending.addAndGet(-missed);
        }
        while (missed != 0);
    }

    private void step() {
        if (finished) {
            return;
        }
        try {
            if (!queued) {
                RuntimeException abandoned = abandonedBy.get();
                if (abandoned != null) {
                    settle(null, null, abandoned); // nothing was sent: nothing to remove
                    return;
                }
                enqueue();
            }
            else {
                takeNews();
            }
            evaluate();
        }
        catch (RuntimeException ex) {
            if (grantedAlready(ex)) {
                return;
            }
            if (queued || !(ex instanceof NotSent) && LockEngine.mayHaveLanded(ex)) {
                // The entry is in the queue (a poll failed for good, the lease ended, the template closed), or the
                // enqueue may have landed even if its answer was lost, or land later: take the entry out again.
                if (!queued) {
                    entry.enqueueMayLandLate();
                }
                leave();
            }
            else if (entry.enqueueCanLandLate()) {
                // Refused at last, but an earlier attempt got no answer and may land later.
                leave();
            }
            else {
                engine.notEnqueued(entry);
            }
            settle(null, null, ex);
        }
        catch (Error ex) {
            if (grantedAlready(ex)) {
                return;
            }
            // Nobody would ever release the entry, and its lease would be renewed for ever.
            log.error("Waiting for {} failed", entry, ex);
            leave();
            settle(null, null, new DynamoLockException("Waiting for " + entry.key() + " failed: " + ex, ex));
        }
    }

    /**
     * Whether the wait had already settled with a grant when {@code ex} was thrown (by what follows the grant in the
     * step): the caller has, or is about to have, the handle, and its release takes the entry out. Leaving here would
     * remove a held entry behind the caller's back, with no loss reported: another could hold beside it.
     */
    private boolean grantedAlready(Throwable ex) {
        Outcome outcome = settled.getNow(null);
        if (outcome == null || outcome.granted() == null) {
            return false;
        }
        log.error("A step of {} failed after its grant; the lock stays held", entry, ex);
        return true;
    }

    private void enqueue() {
        // Registered before the enqueue is sent: a same-JVM release answered in between hands over a state with
        // our entry in it, which counts (R6); states without it are ignored.
        engine.handoff.register(entry);
        if (engine.wakeUps != null) {
            engine.wakeUps.register(entry.id(), this); // as the handoff, before a hint can be sent for our entry
        }
        long sentAt = System.nanoTime();
        entry.enqueued(0, sentAt);
        long sentAtMillis = engine.settings.clock().millis();
        entry.enqueuedAt(sentAtMillis);
        if (!engine.enqueuing(entry)) {
            throw new NotSent("The LockTemplate was closed before the request for " + entry.key() + " was sent");
        }
        QueueState answer = engine.table.enqueue(entry.key(), entry.newEntry(engine.wakeUpAddress()), sentAtMillis,
                entry::enqueueMayLandLate);
        QueueState.Entry self = answer.entry(entry.id());
        if (self == null) {
            throw new DynamoLockException("Enqueue of " + entry + " returned an item without the entry: " + answer);
        }
        entry.enqueued(self.ticket(), sentAt);
        queued = true;
        adopt(answer);
        nextPollAt = sentAt;
        engine.admit(entry, answer, deadlineNanos - sentAt > 0);
    }

    /** After a wake-up: the freshest state offered, else a poll if one is due. */
    private void takeNews() {
        QueueState offered = entry.takeOffered();
        if (offered != null) {
            // Only a state that holds our entry counts (one handed over by another thread may predate our enqueue),
            // and only if no older than what we know: states of one lock arrive from several threads out of order.
            // A good state ends the pause after a failure (a purge, a write, may pass where reads are refused), but
            // it is not a request of ours that succeeded: a time-out still names our last failure.
            if (offered.entry(entry.id()) != null && entry.isNewer(offered, state)) {
                state = offered; // stamped and learned by whoever offered it
                stateFromHint = offered == hintedState;
                failure = null;
            }
            return;
        }
        long now = System.nanoTime();
        // A plain hint: read now, once per interval of the poll schedule, without moving the schedule. So hints add
        // at most one read per interval, whatever arrives (forged, duplicated), and never delay the scheduled poll.
        // Nor do they end the pause after a failed purge: only the scheduled poll does, or the read would be
        // followed by another purge, and a failed one restarts the schedule, hint after hint.
        boolean forHint = hinted.getAndSet(false) && !hintReadSincePoll && now - nextPollAt < 0;
        if ((forHint || now - nextPollAt >= 0) && entry.isLive()) {
            RuntimeException pausedBy = failure;
            Duration left = timeLeft();
            // Whether the wait's end, not the table's limits, bounds the poll, with so little left that a call
            // timeout only says the deadline came first. With more left, one means retries (throttling, failed
            // attempts) ran out the time: a failure of the table, which the time-out must name.
            boolean deadlineBound = left.compareTo(DEADLINE_CUT) < 0
                    && engine.table.waitTimeout(left).compareTo(left) >= 0;
            attempt(() -> engine.table.read(entry.key(), left), deadlineBound);
            if (forHint) {
                hintReadSincePoll = true;
                failure = failure == null ? pausedBy : failure;
                engine.wakeUps.countUseful();
            }
            else {
                polled = true;
                hintReadSincePoll = false;
                if (nextPollFor != 0) {
                    predictions.spend(nextPollFor);
                }
            }
        }
    }

    /** Applies the rules to what we know until we hold, give up or wait for the next event. */
    private void evaluate() {
        while (true) {
            RuntimeException abandoned = abandonedBy.get();
            if (abandoned != null) {
                leave();
                settle(null, null, abandoned);
                return;
            }
            if (entry.phase() == Acquisition.Phase.LOST) {
                throw lost(entry.lostReason());
            }
            if (engine.isClosed()) {
                throw new DynamoLockException("The LockTemplate was closed while waiting for " + entry.key());
            }
            QueueState.Entry own = state.entry(entry.id());
            if (own != null && own.ticket() == QueueState.UNREADABLE_TICKET) {
                throw new DynamoLockException("The lock item of " + entry.key() + " gave this acquisition no usable"
                        + " ticket, i.e. no integer below 2^63 (the item's counter '" + QueueState.NEXT + "' is "
                        + counter(state) + "; edited by hand?). No acquisition can be granted the"
                        + " lock until it is fixed: delete the item while nobody holds the lock (it is created again)");
            }
            long now = System.nanoTime();
            WaitLoop.Next next = engine.waitLoop.decide(state, entry.id(), failure, engine.settings.clock().millis(),
                    now, deadlineNanos);
            if (next instanceof WaitLoop.Removed) {
                throw lost("the queue entry was removed while waiting: purged after it expired (was this JVM"
                        + " paused past the lease?) or broken by an operator");
            }
            if (next instanceof WaitLoop.Grant granted) {
                // Not on a hint's state, nor on a same-JVM hand-over's: a holder's hand-over carries the lease ends it
                // last learned, which may look expired though their callers renew; the next state read from DynamoDB
                // shows what is dead.
                List<QueueState.Entry> expired = stateFromHint || state.handedOver() ? List.of() : granted.expired();
                grant();
                purgeBeside(expired);
                return;
            }
            if (next instanceof WaitLoop.GiveUp giveUp) {
                leave();
                WaitLoop.GaveUp gaveUp = giveUp.gaveUp();
                settle(null, gaveUp.withFailure(lastFailure), null);
                return;
            }
            if (next instanceof WaitLoop.Purge purge) {
                purged(() -> engine.table.purge(entry.key(), entry.id(), purge.stale()));
                continue;
            }
            if (next instanceof WaitLoop.PurgeNeverHeld neverHeld) {
                purged(() -> engine.table.purgeNeverHeld(entry.key(), entry.id(), neverHeld.dead(),
                        neverHeld.keepers(), engine.settings.clock().millis()));
                continue;
            }
            sleep(now, ((WaitLoop.Wait) next).delayNanos());
            return;
        }
    }

    private static String counter(QueueState state) {
        AttributeValue next = state.item().get(QueueState.NEXT);
        return next == null ? "unknown" : next.n() != null ? next.n() : next.toString();
    }

    private void grant() {
        if (stateFromHint && engine.wakeUps != null) {
            engine.wakeUps.countUseful(); // taken on a hint's state, without a read
        }
        entry.grantedWith(state);
        if (!entry.granted()) {
            leave();
            throw LockLostException.beforeGrant("The lease of " + entry.key() + " ran out before the lock could be"
                    + " handed over (" + entry.lostReason() + "); it was not granted");
        }
        settle(entry, null, null);
    }

    /**
     * Removes {@code expired}, dead entries ahead that did not keep us out ({@link WaitLoop.Grant}), on a request
     * thread: the grant does not wait for it. Each only if its lease end is still the one seen expired and our entry
     * is there, as any purge, and only by one caller of the template ({@link LockEngine#claimDead}): the readers one
     * release lets in would otherwise each send one. Refused (renewed meanwhile, our entry released first) or
     * failed, it costs nothing but the request, and the next grant that sees them tries again; with every request
     * thread busy, or none that can be started, it is not sent. Never throws: the wait has settled with a grant.
     */
    private void purgeBeside(List<QueueState.Entry> expired) {
        List<QueueState.Entry> claimed = expired.stream().filter(dead -> engine.claimDead(dead.id())).toList();
        if (claimed.isEmpty()) {
            return;
        }
        boolean sent;
        try {
            sent = engine.workers.tryRequest(() -> {
                List<QueueState.Entry> left = claimed; // unclaimed again unless the answer shows them gone
                try {
                    QueueState after = engine.table.purgeBeside(entry.key(), entry.id(), claimed);
                    left = claimed.stream().filter(dead -> after.entry(dead.id()) != null).toList();
                    if (left.size() < claimed.size()) {
                        engine.published(entry.key(), after);
                    }
                }
                catch (RuntimeException ex) {
                    log.debug("Purging the expired entries ahead of {} failed: {}", entry, ex.toString());
                }
                finally {
                    left.forEach(dead -> engine.unclaimDead(dead.id()));
                }
            });
        }
        catch (Throwable ex) {
            // After the grant, which nothing may undo: a thread that cannot be started (OutOfMemoryError "unable to
            // create native thread") only costs this purge, as a busy pool does.
            log.warn("Could not start the purge of the expired entries ahead of {}; the next grant tries again",
                    entry, ex);
            sent = false;
        }
        if (!sent) {
            claimed.forEach(dead -> engine.unclaimDead(dead.id()));
        }
    }

    /**
     * Until the next poll or the deadline, whichever is first, unless an event comes sooner. The schedule's poll
     * is due one interval after the last poll (a fresh state may bring it forward, as today); a predicted release
     * may bring the next poll further forward ({@link WaitLoop#nextPoll}).
     */
    private void sleep(long now, long delayNanos) {
        if (polled) {
            dueAt = now + delayNanos;
        }
        else {
            dueAt = Waits.earlier(dueAt, now + delayNanos);
        }
        PredictivePolling.Poll poll = engine.waitLoop.nextPoll(dueAt, state, entry.id(), predictions,
                engine.settings.clock().millis(), now);
        if (polled || poll.atNanos() - nextPollAt < 0) {
            nextPollAt = poll.atNanos();
            nextPollFor = poll.forPrediction();
        }
        polled = false;
        cancelTimer();
        timer = engine.workers.schedule(this::signal, Waits.earlier(nextPollAt, deadlineNanos) - now);
        if (timer == null) {
            signal(); // the timer has shut down, so the template is closed: the next step ends the wait
        }
    }

    /** A purge; its state goes to this JVM's other waiters and, with hints on, to the processes it may let in. */
    private void purged(Supplier<QueueState> purge) {
        QueueState before = state;
        if (attempt(purge)) {
            if (state.entries().equals(before.entries())) {
                // Refused with nothing changed: an entry whose stored lease end no purge matches (an item edited by
                // hand). Purging again at once would loop past the deadline; wait a poll, as after a failure, and
                // tell nobody (published, the state would come back to this waiter as news and end the pause).
                failure = new IllegalStateException("DynamoDB refused to remove the expired entries ahead of "
                        + entry.id() + " though they are unchanged (an item edited by hand?); break them by ticket: "
                        + state.entries());
                polled = true;
                return;
            }
            engine.published(entry.key(), state);
        }
        else {
            polled = true;
        }
    }

    /**
     * One poll or purge. A failure (throttling, a timeout) is not the end of the wait: the waiter keeps its
     * place, its heartbeats keep its lease, and it tries again after a poll interval, until its deadline.
     * A missing or wrong table ends the wait at once.
     */
    private boolean attempt(Supplier<QueueState> request) {
        return attempt(request, false);
    }

    /**
     * {@link #attempt(Supplier)}; {@code deadlineBound}: the request was given no longer than the wait had left, so
     * a call timeout means the caller's own deadline cut it short. That is no failure of the table: it is neither
     * logged as one nor reported as the time-out's cause, and it pauses nothing (the wait is over anyway).
     */
    private boolean attempt(Supplier<QueueState> request, boolean deadlineBound) {
        try {
            adopt(request.get());
            stateFromHint = false;
            failure = null;
            lastFailure = null;
            return true;
        }
        catch (LockTableException ex) {
            throw ex;
        }
        catch (RuntimeException ex) {
            if (deadlineBound && ex instanceof ApiCallTimeoutException) {
                log.debug("Waiting for {}: a poll was cut short by the wait's deadline", entry);
                return false;
            }
            // In an outage, or under throttling, every waiter fails poll after poll: a queue of 100 would log
            // thousands of stack traces a second. One a minute per template; the rest are DEBUG lines.
            if (engine.failedRequestWarningDue()) {
                log.warn("Waiting for {}: a request failed; trying again after a poll interval (further failed"
                        + " requests of this template's waiters are logged at DEBUG for a minute)", entry, ex);
            }
            else {
                log.debug("Waiting for {}: a request failed again: {}", entry, ex.toString());
            }
            failure = ex;
            lastFailure = ex;
            return false;
        }
    }

    /** What the wait has left: a poll may take no longer ({@link QueueTable#waitTimeout}). */
    private Duration timeLeft() {
        return Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime()));
    }

    /** An answer to one of our requests: the state we act on, true as it arrives, and news for our hand-over. */
    private void adopt(QueueState answer) {
        state = answer.withAsOf(engine.settings.clock().millis());
        entry.learned(state);
    }

    private void settle(Acquisition granted, WaitLoop.GaveUp gaveUp, RuntimeException failed) {
        finished = true;
        cancelTimer();
        if (granted == null) { // a holder stays, to learn who is behind it for its hand-over, until it leaves
            engine.handoff.unregister(entry);
            if (engine.wakeUps != null) {
                engine.wakeUps.unregister(entry.id());
            }
        }
        Outcome outcome = new Outcome(granted, gaveUp, failed, waited());
        if (removal == null || removal.isDone()) {
            settled.complete(outcome);
            return;
        }
        // Completed from the step threads, not the timer's: what is chained to it may block.
        ScheduledFuture<?> late = engine.workers.schedule(() -> engine.workers.step(() -> settled.complete(outcome)),
                REMOVAL_WAIT.toNanos());
        removal.whenComplete((answered, failure) -> {
            settled.complete(outcome);
            if (late != null) {
                late.cancel(false);
            }
        });
        if (late == null) {
            settled.complete(outcome); // the timer has shut down
        }
    }

    /** Takes our entry out of the queue, the removal sent in the background; {@link #settle} waits a little for it. */
    private void leave() {
        if (removal == null) { // once: a second leave (a failed grant's, then its step's) sends nothing
            removal = engine.leaveInBackground(entry);
        }
    }

    private void cancelTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    /** The template closed before the enqueue went out: nothing was sent, nothing is to be removed. */
    private static final class NotSent extends DynamoLockException {

        NotSent(String message) {
            super(message);
        }
    }

    private LockLostException lost(String reason) {
        return LockLostException.beforeGrant("Lost the place in the queue of " + entry.key() + " while waiting: "
                + reason);
    }
}
