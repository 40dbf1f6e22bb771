package io.dynamolock.core.internal;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockLostException;
import io.dynamolock.core.LockOptionException;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockScope;
import io.dynamolock.core.LockWaitTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * A request for several entities: the single locks one after another, in the request's canonical order (sorted
 * by entity, all in one namespace; {@link LockRequest#entities()}), under one overall deadline, all or nothing.
 * Every caller takes any two locks in the same order, so no cycle of waits can form between callers of this
 * library: whoever holds the lower lock never waits for anyone who waits for it. Each part is an ordinary
 * acquisition (its own entry, ticket, lease, listener events, and re-entry into what the scope holds).
 */
final class MultiAcquire {

    private final LockEngine engine;

    MultiAcquire(LockEngine engine) {
        this.engine = engine;
    }

    /** On the calling thread: what was taken is released if a later part times out, is interrupted or fails. */
    LockHandle acquire(LockRequest request, Duration wait, LockScope scope) {
        List<LockRequest> parts = parts(request);
        parts.forEach(part -> engine.refuseBeforeSending(part, wait, scope, Thread.currentThread()));
        refuseOutOfOrder(request, parts, wait, scope);
        long start = System.nanoTime();
        long deadline = Waits.deadline(start, wait);
        List<LockHandle> taken = new ArrayList<>();
        // A part lost while a later one is waited for ends that wait: someone else may hold it by now.
        CompletableFuture<RuntimeException> partLost = new CompletableFuture<>();
        try {
            for (LockRequest part : parts) {
                LockHandle lock = engine.acquireOne(part, remaining(wait, deadline), partLost);
                taken.add(lock);
                lock.whenLost().thenAccept(lost -> partLost.complete(lostPart(lost, scope)));
            }
            requireAllValid(taken, scope);
        }
        catch (LockWaitTimeoutException timeout) {
            LockWaitTimeoutException whole = waitedInAll(timeout, start); // before the release, which is not waiting
            releaseQuietly(taken, whole);
            throw whole;
        }
        catch (RuntimeException | Error ex) {
            releaseQuietly(taken, ex);
            throw ex;
        }
        return new MultiHold(taken);
    }

    /**
     * A part's time-out, as the caller's: it waited since the request began, for the parts before as well. Its cause
     * stays the last failure of the part's wait, if any (README: faults).
     */
    private static LockWaitTimeoutException waitedInAll(LockWaitTimeoutException part, long startNanos) {
        LockWaitTimeoutException whole = new LockWaitTimeoutException(part.entity(), part.namespace(),
                Duration.ofNanos(System.nanoTime() - startNanos), part.position(), part.ownersAhead(), part.hint());
        if (part.getCause() != null) {
            whole.initCause(part.getCause()); // README: the last failure is a time-out's cause
        }
        for (Throwable suppressed : part.getSuppressed()) {
            whole.addSuppressed(suppressed);
        }
        return whole;
    }

    /**
     * Chained futures, one part after another. Completing the returned future from outside (cancel, a time-out,
     * a value) abandons the part being waited for and releases what was taken; a part granted after that is released.
     */
    CompletableFuture<LockHandle> acquireAsync(LockRequest request, Duration wait, LockScope scope) {
        List<LockRequest> parts = parts(request);
        try {
            parts.forEach(part -> engine.refuseBeforeSending(part, wait, scope, null));
        }
        catch (LockLostException scopeLost) {
            return CompletableFuture.failedFuture(scopeLost); // as for one entity; a broken rule throws
        }
        refuseOutOfOrder(request, parts, wait, scope);
        Chain chain = new Chain(parts, wait, System.nanoTime(), scope);
        chain.next(0);
        return chain.result;
    }

    /**
     * The order that keeps callers out of cycles holds only if nobody waits for a lock while holding one that sorts
     * after it: a request made inside a scope that holds a later part but not an earlier one would. Refused before
     * anything is sent; a request that does not wait cannot close a cycle.
     */
    private void refuseOutOfOrder(LockRequest request, List<LockRequest> parts, Duration wait, LockScope scope) {
        if (wait.isZero()) {
            return;
        }
        String missing = null;
        for (LockRequest part : parts) {
            if (!engine.scopeHolds(scope, part)) {
                missing = missing == null ? Printable.escape(part.entity()) : missing;
            }
            else if (missing != null) {
                List<String> entities = Printable.escapeAll(request.entities());
                String held = Printable.escape(part.entity());
                throw new LockOptionException("entities", request.entities(), "This request for "
                        + entities + " was made inside a scope that holds " + held + " but not "
                        + missing + ", which sorts before it: it would wait for " + missing + " while holding "
                        + held + ", and a caller that holds " + missing + " and waits for " + held
                        + " would wait for it in a cycle. Take " + entities + " in the outer scope, or "
                        + missing + " before " + held);
            }
        }
    }

    /** The single requests, checked before anything is sent. */
    private List<LockRequest> parts(LockRequest request) {
        List<LockRequest> parts = request.entities().stream().map(entity -> part(request, entity)).toList();
        parts.forEach(engine::keyOf);
        return parts;
    }

    private static LockRequest part(LockRequest request, String entity) {
        LockRequest.Builder part = LockRequest.builder(entity).namespace(request.namespace())
                .reentrant(request.reentrant()).threadBound(request.threadBound()).failClosed(request.failClosed())
                .mode(request.mode())
                .permits(request.permits());
        if (request.lease() != null) {
            part.lease(request.lease());
        }
        return part.build();
    }

    private static Duration remaining(Duration wait, long deadline) {
        return Waits.isForever(wait) ? wait : Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
    }

    /**
     * All or nothing: a part whose lease was lost while a later one was waited for (paused past it, and purged)
     * fails the whole, as a single lock lost before its grant does; someone else may hold that entity by now. A part
     * joined from {@code scope} was the scope's hold, whose work ran: that loss is a granted one.
     */
    private static void requireAllValid(List<LockHandle> taken, LockScope scope) {
        for (LockHandle part : taken) {
            if (!part.isValid()) {
                throw lostPart(part, scope);
            }
        }
    }

    /** Why the request fails when {@code part} was lost before the others were taken. */
    private static LockLostException lostPart(LockHandle part, LockScope scope) {
        boolean joined = scope.locks().stream().flatMap(held -> held.parts().stream())
                .anyMatch(held -> held.entryId().equals(part.entryId()));
        String what = "The lease of " + Printable.escape(part.entity()) + " (namespace '"
                + Printable.escape(part.namespace()) + "') was lost"
                + " while the other entities of the request were waited for; the request released what it had"
                + " taken";
        return joined ? new LockLostException(what + ", but the enclosing scope held "
                + Printable.escape(part.entity()) + " and its work ran") : LockLostException.beforeGrant(what + " and holds none of them");
    }

    private static void releaseQuietly(List<LockHandle> taken, Throwable cause) {
        try {
            MultiHold.releaseAll(taken);
        }
        catch (RuntimeException ex) {
            cause.addSuppressed(ex); // the entries left behind expire after their lease
        }
    }

    /** One asynchronous acquisition of several locks; {@link #taken} and {@link #current} are guarded by this. */
    private final class Chain {

        final CompletableFuture<LockHandle> result = new CompletableFuture<>();
        private final List<LockRequest> parts;
        private final Duration wait;
        private final long start;
        private final long deadline;
        private final LockScope scope;
        private final List<LockHandle> taken = new ArrayList<>();
        private CompletableFuture<LockHandle> current;
        /** The lock this chain completed {@link #result} with; any other completion is the caller's. */
        private volatile LockHandle built;

        Chain(List<LockRequest> parts, Duration wait, long start, LockScope scope) {
            this.parts = parts;
            this.wait = wait;
            this.start = start;
            this.deadline = Waits.deadline(start, wait);
            this.scope = scope;
            result.whenComplete((lock, ex) -> {
                if (ex != null || lock == null || lock != built) {
                    abandon(ex); // failed, cancelled, or completed by the caller (complete, completeOnTimeout)
                }
            });
        }

        void next(int index) {
            CompletableFuture<LockHandle> part;
            try {
                part = engine.acquireAsync(parts.get(index), remaining(wait, deadline), scope);
            }
            catch (RuntimeException | Error ex) {
                // The template closed between two parts, or a listener failed: release what was taken. An Error
                // left to escape here would end in the previous part's callback, where nobody reads it.
                result.completeExceptionally(ex);
                return;
            }
            synchronized (this) {
                current = part;
            }
            if (result.isDone()) {
                part.cancel(false); // abandoned while the part was being asked for
            }
            part.whenComplete((lock, ex) -> {
                if (ex != null) {
                    Throwable failure = ex instanceof CompletionException && ex.getCause() != null ? ex.getCause() : ex;
                    result.completeExceptionally(failure instanceof LockWaitTimeoutException timeout
                            ? waitedInAll(timeout, start) : failure);
                }
                else if (!add(lock)) {
                    // Granted after the caller gave up. Release is a blocking request: not on this thread, which
                    // may be a step thread or the wake-up receiver.
                    engine.workers.requestsOrCaller().execute(lock::release);
                }
                else if (index + 1 < parts.size()) {
                    // Lost while a later part is waited for: that wait ends (abandon()), someone may hold it by now.
                    lock.whenLost().thenAccept(lost -> result.completeExceptionally(lostPart(lost, scope)));
                    next(index + 1);
                }
                else {
                    List<LockHandle> all;
                    synchronized (this) {
                        all = List.copyOf(taken);
                    }
                    try {
                        requireAllValid(all, scope);
                    }
                    catch (LockLostException lost) {
                        result.completeExceptionally(lost);
                        return;
                    }
                    built = new MultiHold(all);
                    result.complete(built);
                }
            });
        }

        private synchronized boolean add(LockHandle lock) {
            if (result.isDone()) {
                return false;
            }
            taken.add(lock);
            return true;
        }

        /** The caller gave up or a part failed: stop waiting, and release what was taken. */
        private void abandon(Throwable why) {
            List<LockHandle> release;
            CompletableFuture<LockHandle> waiting;
            synchronized (this) {
                release = List.copyOf(taken);
                taken.clear();
                waiting = current;
            }
            if (waiting != null) {
                Throwable cause = why instanceof CompletionException && why.getCause() != null ? why.getCause() : why;
                if (cause instanceof RuntimeException && !(cause instanceof CancellationException)) {
                    waiting.completeExceptionally(cause); // the chain's own failure (a part lost): onFailed names it
                }
                else {
                    waiting.cancel(false);
                }
            }
            if (release.isEmpty()) {
                return;
            }
            // Blocking requests, and the caller may be cancelling on an event loop: on a request thread.
            engine.workers.requestsOrCaller().execute(() -> {
                try {
                    MultiHold.releaseAll(release);
                }
                catch (RuntimeException ex) {
                    // Nobody to tell: the entries left behind expire after their lease.
                }
            });
        }
    }
}
