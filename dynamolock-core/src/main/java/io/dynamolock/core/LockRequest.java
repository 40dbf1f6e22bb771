package io.dynamolock.core;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Objects;

/**
 * What to lock and how long to wait: an entity, and optionally a namespace, a wait
 * and a lease. Unset options take the {@link LockTemplate}'s defaults. Immutable.
 *
 * <pre>{@code
 * LockRequest.of("order-42");
 * LockRequest.builder("order-42").namespace("billing").wait(Duration.ofSeconds(5)).build();
 * }</pre>
 */
public final class LockRequest {

    /** Wait as long as it takes. */
    public static final Duration WAIT_FOREVER = ChronoUnit.FOREVER.getDuration();

    /** Do not wait: fail at once if any live entry is ahead. */
    public static final Duration NO_WAIT = Duration.ZERO;

    private final String entity;
    private final String namespace;
    private final Duration wait;
    private final Duration lease;
    private final boolean reentrant;
    private final boolean failClosed;

    private LockRequest(Builder builder) {
        this.entity = builder.entity;
        this.namespace = builder.namespace;
        this.wait = builder.wait;
        this.lease = builder.lease;
        this.reentrant = builder.reentrant;
        this.failClosed = builder.failClosed;
    }

    /** A request for {@code entity} with every other option from the template. */
    public static LockRequest of(String entity) {
        return builder(entity).build();
    }

    public static Builder builder(String entity) {
        return new Builder(entity);
    }

    public String entity() {
        return entity;
    }

    /** The namespace, or {@code null} for the template's default. */
    public String namespace() {
        return namespace;
    }

    /** The longest wait, or {@code null} for the template's default. */
    public Duration waitTime() {
        return wait;
    }

    /** The lease, or {@code null} for the template's default. */
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
     * Whether the entry is fail-closed (default {@code false}, fail-open). A fail-open entry whose process dies
     * expires one lease after its last heartbeat, and the next waiter goes ahead. A fail-closed entry never
     * expires by lease: if its process dies, the lock stays taken (waiters wait, or time out, behind it; the
     * table's TTL never removes it) until someone {@linkplain LockTemplate#breakLock breaks} it. For work that
     * must not be done twice or resumed blindly, e.g. a payment run. Its holder still renews the lease, so the
     * queue shows whether it is alive, and its own handle still turns invalid when its renewals fail.
     */
    public boolean failClosed() {
        return failClosed;
    }

    /** A copy of this request that does not wait. */
    public LockRequest withoutWait() {
        return new Builder(this).wait(NO_WAIT).build();
    }

    @Override
    public String toString() {
        return "LockRequest[entity=" + entity + ", namespace=" + namespace + ", wait=" + wait + ", lease=" + lease
                + ", reentrant=" + reentrant + ", failClosed=" + failClosed + "]";
    }

    /** Builds a {@link LockRequest}; values are checked when the request is used. */
    public static final class Builder {

        private final String entity;
        private String namespace;
        private Duration wait;
        private Duration lease;
        private boolean reentrant = true;
        private boolean failClosed;

        private Builder(String entity) {
            this.entity = entity;
        }

        private Builder(LockRequest request) {
            this.entity = request.entity;
            this.namespace = request.namespace;
            this.wait = request.wait;
            this.lease = request.lease;
            this.reentrant = request.reentrant;
            this.failClosed = request.failClosed;
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

        /** See {@link LockRequest#failClosed()}. */
        public Builder failClosed(boolean failClosed) {
            this.failClosed = failClosed;
            return this;
        }

        public LockRequest build() {
            return new LockRequest(this);
        }
    }
}
