package io.dynamolock.core.internal;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Renews the leases of one template's live entries, holders and waiters alike, on one
 * shared scheduler. A renewal that is refused means the entry was purged: the lease is
 * lost at once. A renewal that fails (throttling, timeouts) is retried sooner, until
 * the lease as last confirmed runs out; then the lease is lost.
 */
final class Heartbeats {

    private static final Logger log = LoggerFactory.getLogger(Heartbeats.class);

    /** Shortest pause before retrying a failed renewal. */
    static final Duration MIN_RETRY = Duration.ofMillis(100);

    private final QueueTable table;
    private final Clock clock;
    private final Duration interval;
    private final Handoff handoff;
    private final ScheduledExecutorService scheduler;
    private final Map<QueueEntry, ScheduledFuture<?>> scheduled = new ConcurrentHashMap<>();
    /**
     * Ends leases on time: a thread of its own that sends no request, so a renewal stuck in a slow request
     * cannot delay the moment its holder learns the lease is gone.
     */
    private final ScheduledExecutorService leaseTimer;
    private final Map<QueueEntry, ScheduledFuture<?>> deadlines = new ConcurrentHashMap<>();

    Heartbeats(QueueTable table, Clock clock, Duration interval, Handoff handoff) {
        this.table = table;
        this.clock = clock;
        this.interval = interval;
        this.handoff = handoff;
        this.scheduler = scheduler(2, "dynamolock-heartbeat-");
        this.leaseTimer = scheduler(1, "dynamolock-lease-timer-");
    }

    /** Cancelled tasks leave the queue at once: every release cancels one a heartbeat interval ahead. */
    private static ScheduledExecutorService scheduler(int threads, String prefix) {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(threads, daemonThreads(prefix));
        executor.setRemoveOnCancelPolicy(true);
        return executor;
    }

    ScheduledExecutorService scheduler() {
        return scheduler;
    }

    void start(QueueEntry entry) {
        watchDeadline(entry);
        schedule(entry, nextRenewal(entry));
    }

    void stop(QueueEntry entry) {
        cancel(scheduled.remove(entry));
        cancel(deadlines.remove(entry));
    }

    void shutdown() {
        scheduler.shutdownNow();
        leaseTimer.shutdownNow();
        scheduled.clear();
        deadlines.clear();
    }

    private static void cancel(ScheduledFuture<?> future) {
        if (future != null) {
            future.cancel(false);
        }
    }

    /**
     * Marks the entry lost when its confirmed lease ends, unless a renewal moves the end first or is in
     * flight then (sent before the end, it may have extended the lease; its answer, bounded by the request
     * time limit, decides).
     */
    private void watchDeadline(QueueEntry entry) {
        long until = entry.confirmedUntilNanos();
        try {
            cancel(deadlines.put(entry, leaseTimer.schedule(() -> {
                if (entry.isLive() && !entry.isRenewing() && entry.confirmedUntilNanos() == until) {
                    entry.markLost("the lease ran out before it could be renewed");
                }
            }, until - System.nanoTime(), TimeUnit.NANOSECONDS)));
        }
        catch (RejectedExecutionException closing) {
            // The template is closing: its entries are left to expire.
        }
        if (!entry.isLive()) {
            cancel(deadlines.remove(entry));
        }
    }

    private void schedule(QueueEntry entry, Duration delay) {
        if (!entry.isLive() || scheduler.isShutdown()) {
            return;
        }
        scheduled.put(entry, scheduler.schedule(() -> renew(entry), delay.toNanos(), TimeUnit.NANOSECONDS));
        if (!entry.isLive()) {
            stop(entry);
        }
    }

    private void renew(QueueEntry entry) {
        if (!entry.isLive()) {
            return;
        }
        long sentAt = System.nanoTime();
        if (sentAt - entry.confirmedUntilNanos() >= 0) {
            entry.markLost("the lease ran out before it could be renewed");
            return;
        }
        entry.renewing(true);
        try {
            QueueState state = table.renew(entry.key(), entry.owner(), clock.millis(), entry.lease());
            if (state.entry(entry.owner()) == null) {
                // Refused: another process judged the entry expired and purged it.
                entry.markLost("the queue entry was purged by another process after its lease expired;"
                        + " was this JVM paused, or its clock behind by more than the lease?");
                return;
            }
            entry.renewed(sentAt);
            watchDeadline(entry);
            // A free look at the queue for this JVM's waiters of the lock, this entry among them.
            handoff.publish(entry.key(), state);
            schedule(entry, nextRenewal(entry));
        }
        catch (RuntimeException ex) {
            long remaining = entry.confirmedUntilNanos() - System.nanoTime();
            if (remaining <= 0) {
                entry.markLost("the lease could not be renewed before it ran out: " + ex);
                return;
            }
            Duration retry = Duration.ofNanos(Math.max(MIN_RETRY.toNanos(),
                    Math.min(entry.renewalInterval(interval).toNanos(), remaining / 4)));
            log.warn("Renewing the lease of {} failed; retrying in {} ms, {} ms of lease left", entry, retry.toMillis(),
                    Duration.ofNanos(remaining).toMillis(), ex);
            schedule(entry, retry);
        }
        finally {
            entry.renewing(false);
        }
    }

    /**
     * One interval after the request that last confirmed the lease was <em>sent</em>, however long its answer
     * took: the lease runs from the send, so a slow answer must not push the renewal past its end.
     */
    private Duration nextRenewal(QueueEntry entry) {
        long confirmedSentAt = entry.confirmedUntilNanos() - entry.lease().toNanos();
        return Duration.ofNanos(Math.max(0, confirmedSentAt + entry.renewalInterval(interval).toNanos() - System.nanoTime()));
    }

    static ThreadFactory daemonThreads(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }
}
