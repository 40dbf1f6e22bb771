package io.dynamolock.core;

import io.dynamolock.core.internal.Printable;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * What to lock and how long to wait: an entity (or several), and optionally a namespace, a wait, a lease, a
 * {@linkplain LockMode mode} and a number of permits. Unset options take the {@link LockTemplate}'s defaults.
 * Immutable.
 *
 * <pre>{@code
 * LockRequest.of("order-42");
 * LockRequest.builder("order-42").namespace("billing").wait(Duration.ofSeconds(5)).build();
 * LockRequest.builder("price-list").mode(LockMode.SHARED).build();          // a reader of a read/write lock
 * LockRequest.builder("partner-api").permits(5).build();                     // a semaphore: at most 5 at once
 * LockRequest.builder(List.of("warehouse-7", "warehouse-3")).build();        // both, or neither
 * }</pre>
 *
 * <p><b>Several entities.</b> A request built from a list locks every entity in it (in its namespace, with its
 * mode and permits), all or nothing: the single locks are taken one after another in one canonical order
 * (sorted by entity; all share the namespace), so two requests for overlapping sets never wait for each other
 * in a cycle, under one overall wait (a request made inside a scope that holds a later part but not an earlier
 * one would wait while holding, and is refused before anything is sent unless it does not wait; a request made
 * while holding a lock outside the set is a nested lock like any other, and nested locks are taken in one order by
 * their callers or not at all); if the wait runs
 * out, the caller is interrupted or a step fails, what was taken is released. Duplicates are locked once. The handle reports every part
 * ({@link LockHandle#parts()}, {@link LockHandle#fencingTokens()}); a lost lease of any part is a lost lease of
 * the whole.
 */
public final class LockRequest {

    /** Wait as long as it takes. */
    public static final Duration WAIT_FOREVER = ChronoUnit.FOREVER.getDuration();

    /** Do not wait: fail at once if any live entry is ahead. */
    public static final Duration NO_WAIT = Duration.ZERO;

    private final List<String> entities;
    private final String namespace;
    private final Duration wait;
    private final Duration lease;
    private final boolean reentrant;
    private final boolean threadBound;
    private final boolean failClosed;
    private final LockMode mode;
    private final int permits;

    private LockRequest(Builder builder) {
        this.entities = builder.entities;
        this.namespace = builder.namespace;
        this.wait = builder.wait;
        this.lease = builder.lease;
        this.reentrant = builder.reentrant;
        this.threadBound = builder.threadBound;
        this.failClosed = builder.failClosed;
        this.mode = builder.mode;
        this.permits = builder.permits;
    }

    /** A request for {@code entity} with every other option from the template. */
    public static LockRequest of(String entity) {
        return builder(entity).build();
    }

    /** A request for {@code entity}. */
    public static Builder builder(String entity) {
        return new Builder(Collections.singletonList(entity));
    }

    /**
     * A request for every entity in {@code entities}, all or nothing (see the class comment). One entity, or the
     * same one several times, makes an ordinary single lock.
     *
     * @throws LockOptionException if {@code entities} is empty or holds {@code null}
     */
    public static Builder builder(Collection<String> entities) {
        if (entities == null || entities.isEmpty() || entities.stream().anyMatch(Objects::isNull)) {
            throw new LockOptionException("entities", entities, "entities " + (entities == null ? null
                    : entities.stream().map(Printable::escape).toList()) + " must hold at least one"
                    + " entity and no null; pass the entities to lock, e.g. List.of(\"account-1\", \"account-2\")");
        }
        return new Builder(entities.stream().distinct().sorted().toList());
    }

    /** The entity; of a request for several, the first of {@link #entities()}. */
    public String entity() {
        return entities.get(0);
    }

    /** Every entity to lock, in the order they are taken: sorted, without duplicates (one for most requests). */
    public List<String> entities() {
        return entities;
    }

    /** The namespace, or {@code null} for the template's default. */
    public String namespace() {
        return namespace;
    }

    /** The longest wait, or {@code null} for the template's default. */
    public Duration waitTime() {
        return wait;
    }

    /**
     * The lease, or {@code null} for the template's default. A request that joins a hold ({@link #reentrant()})
     * keeps that hold's lease.
     */
    public Duration lease() {
        return lease;
    }

    /**
     * Whether a call made inside a scope that holds this lock (an {@code execute} callback, a
     * {@code @QueueLocked} method) joins it instead of queueing behind itself (default {@code true}).
     * Outside such a scope nothing is joined, whatever this says.
     */
    public boolean reentrant() {
        return reentrant;
    }

    /**
     * Whether the lock belongs to the thread that takes it, as a {@code java.util.concurrent.locks.Lock} does
     * (default {@code false}): the caller promises that only that thread releases it. While that thread holds it, a
     * request of the same thread for the same lock that may wait (a scope's, which cannot join it) is refused with
     * {@link IllegalStateException} rather than risk waiting for itself for ever; a semaphore's next permit is
     * refused only once every permit is the thread's own (before that it waits for other holders only). Without
     * it a handle may be released from any thread, so such a request waits, and only a warning is logged. If that
     * thread ends without releasing it, nobody may, so its lease is no longer renewed and runs out as after a
     * process death, unless something else still has to release a hold of it: a {@linkplain
     * LockHandle#releaseAfter minimum hold}, a join from another thread or a carried scope.
     */
    public boolean threadBound() {
        return threadBound;
    }

    /**
     * Whether the entry is fail-closed (default {@code false}, fail-open). A fail-open entry whose process dies
     * expires one lease after its last heartbeat, and the next waiter goes ahead. A fail-closed entry never
     * expires by lease: if its process dies, the lock stays taken (waiters wait, or time out, behind it; the
     * table's TTL never removes it) until someone {@linkplain LockTemplate#breakLock breaks} it. For work that
     * must not be done twice or resumed blindly, e.g. a payment run. Its holder still renews the lease, so the
     * queue shows whether it is alive, and its own handle still turns invalid when its renewals fail. A fail-closed
     * entry whose process dies while entries ahead still keep it out never held: a waiter behind it removes it
     * once its lease has run out. Made inside a scope that holds the lock fail-open, a fail-closed request is
     * refused ({@link LockOptionException}) rather than joined.
     */
    public boolean failClosed() {
        return failClosed;
    }

    /** The mode (default {@link LockMode#EXCLUSIVE}). */
    public LockMode mode() {
        return mode;
    }

    /**
     * How many exclusive holders the lock admits at once (default 1; more makes a semaphore). The first
     * request that queues on an idle lock fixes it on the lock's item; while anyone alive is queued, or a
     * fail-closed entry that may have held (until it is broken), a request with another number is refused with a
     * {@link LockOptionException} naming both. Dead entries (leases ended; fail-closed ones only if they never
     * held) are purged instead, and the queue taken over.
     */
    public int permits() {
        return permits;
    }

    /** A copy of this request that does not wait. */
    public LockRequest withoutWait() {
        return new Builder(this).wait(NO_WAIT).build();
    }

    @Override
    public String toString() {
        return "LockRequest[entit" + (entities.size() == 1 ? "y=" + Printable.escape(entity())
                : "ies=" + Printable.escapeAll(entities)) + ", namespace=" + Printable.escape(namespace) + ", wait="
                + wait + ", lease=" + lease + ", reentrant=" + reentrant + ", threadBound=" + threadBound
                + ", failClosed=" + failClosed + ", mode=" + mode + ", permits=" + permits + "]";
    }

    /**
     * Builds a {@link LockRequest}. Mode and permits are checked when set or built; the other values when the
     * request is used.
     */
    public static final class Builder {

        private final List<String> entities;
        private String namespace;
        private Duration wait;
        private Duration lease;
        private boolean reentrant = true;
        private boolean threadBound;
        private boolean failClosed;
        private LockMode mode = LockMode.EXCLUSIVE;
        private int permits = 1;

        private Builder(List<String> entities) {
            this.entities = entities;
        }

        private Builder(LockRequest request) {
            this.entities = request.entities;
            this.namespace = request.namespace;
            this.wait = request.wait;
            this.lease = request.lease;
            this.reentrant = request.reentrant;
            this.threadBound = request.threadBound;
            this.failClosed = request.failClosed;
            this.mode = request.mode;
            this.permits = request.permits;
        }

        /** Locks of different namespaces on one entity are independent. */
        public Builder namespace(String namespace) {
            this.namespace = namespace;
            return this;
        }

        /** {@link #NO_WAIT}, a positive duration, or {@link #WAIT_FOREVER}. */
        public Builder wait(Duration wait) {
            this.wait = Objects.requireNonNull(wait, "wait must not be null; use LockRequest.NO_WAIT or WAIT_FOREVER");
            return this;
        }

        /** How long the entry stays valid without a heartbeat; longer than the heartbeat interval. */
        public Builder lease(Duration lease) {
            this.lease = Objects.requireNonNull(lease, "lease must not be null");
            return this;
        }

        public Builder reentrant(boolean reentrant) {
            this.reentrant = reentrant;
            return this;
        }

        /** See {@link LockRequest#threadBound()}. */
        public Builder threadBound(boolean threadBound) {
            this.threadBound = threadBound;
            return this;
        }

        /** See {@link LockRequest#failClosed()}. */
        public Builder failClosed(boolean failClosed) {
            this.failClosed = failClosed;
            return this;
        }

        /** {@link LockMode#SHARED} for a reader of a read/write lock; {@link LockMode#EXCLUSIVE} by default. */
        public Builder mode(LockMode mode) {
            this.mode = Objects.requireNonNull(mode, "mode must not be null; use LockMode.EXCLUSIVE or SHARED");
            return this;
        }

        /**
         * How many holders the lock admits at once (see {@link LockRequest#permits()}); every request for the lock
         * must say the same.
         *
         * @throws LockOptionException if {@code permits} is below 1
         */
        public Builder permits(int permits) {
            if (permits < 1) {
                throw new LockOptionException("permits", permits, "permits " + permits + " is below 1; use 1 for a"
                        + " lock, or N > 1 for a semaphore that admits N holders at once");
            }
            this.permits = permits;
            return this;
        }

        /** @throws LockOptionException if the mode is {@link LockMode#SHARED} with more than one permit */
        public LockRequest build() {
            if (mode == LockMode.SHARED && permits > 1) {
                throw new LockOptionException("permits", permits, "mode SHARED with permits " + permits + " mixes"
                        + " two kinds of lock: shared entries already hold together without a limit. Use SHARED with"
                        + " 1 permit (a read/write lock), or EXCLUSIVE with " + permits + " permits (a semaphore)");
            }
            return new LockRequest(this);
        }
    }
}
