package io.dynamolock.core.internal;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The threads of one template; none of them waits for a lock.
 * <ul>
 * <li><b>timer</b>: one thread that only hands tasks on (lease deadlines, renewals and waiters' polls come due
 * here); it sends no request and runs no callback, so nothing it runs can be late because of a slow one.</li>
 * <li><b>callbacks</b>: lost-lease callbacks, a few at a time, queued: user code, which may block, never runs on
 * the timer, nor waits for a free request thread. The library's own reactions to a loss
 * ({@link io.dynamolock.core.LockHandle#whenLost()}) run on request threads instead, so that blocked callbacks
 * do not delay them; when every one is busy, on a few <b>reaction</b> threads of their own.</li>
 * <li><b>requests</b>: renewals, background retries, and the removals of waiters that leave (a slow one must not
 * hold a step thread, which serves every waiter; they take a few lanes of these threads at most,
 * {@link RemovalLane}). It grows with the requests in
 * flight (a thread per request waiting for its answer, up to {@link #MAX_REQUEST_THREADS}) and shrinks when
 * idle, so slow answers cost threads, not leases (R12). Grants are delivered here too, since the code an
 * application chains to an acquisition's future runs on the thread that completes it.</li>
 * <li><b>steps</b>: the steps of waiting acquisitions (the enqueue, polls and purges among them), at most
 * {@link #STEP_THREADS} at once, in the order they came due: waiting costs no thread, and 10,000 waiters
 * cost the same few threads as ten.</li>
 * </ul>
 */
final class Workers {

    private static final Logger log = LoggerFactory.getLogger(Workers.class);

    /**
     * Requests in flight at most: 500 threads waiting 200 ms each renew 2,500 leases a second, the leases of
     * 75,000 locks at the default 30 s heartbeat.
     */
    static final int MAX_REQUEST_THREADS = 500;

    /**
     * Steps of waiting acquisitions run at once at most: each is a little computing and a request or a few (a
     * poll; an enqueue, its retry and a TTL write; a purge; never a removal, sent on a request thread), and the
     * SDK's default connection pool (50) serves renewals as well.
     */
    static final int STEP_THREADS = 16;

    /** Lost-lease callbacks that run at once at most; more wait in line. */
    static final int CALLBACK_THREADS = 4;

    /** Reactions to a loss that run at once at most when no request thread is free; more wait in line. */
    static final int REACTION_THREADS = 4;

    /** When every request thread is busy, a task is handed over again after this pause. */
    static final Duration BUSY_RETRY = Duration.ofMillis(20);

    private final ScheduledThreadPoolExecutor timer;
    private final ThreadPoolExecutor requests;
    private final ThreadPoolExecutor steps;
    private final ThreadPoolExecutor callbacks;
    private final ThreadPoolExecutor reactionsWhenBusy;
    /**
     * Whether the last request thread that had to be started could not be: under lasting thread exhaustion every
     * retry fails alike, so only the first failure of a run is logged at ERROR.
     */
    private final AtomicBoolean threadStartFailing = new AtomicBoolean();
    private final CompletableFuture<Void> terminated = new CompletableFuture<>();

    Workers() {
        this.timer = new ScheduledThreadPoolExecutor(1, timerThreads());
        // Cancelled tasks leave the queue at once: every release cancels a renewal an interval ahead, and
        // every fresh state a waiter receives cancels its poll.
        this.timer.setRemoveOnCancelPolicy(true);
        this.requests = new ThreadPoolExecutor(0, MAX_REQUEST_THREADS, 30, TimeUnit.SECONDS, new SynchronousQueue<>(),
                daemonThreads("dynamolock-request-"));
        // A queue without a lock: event loops hand asynchronous acquisitions their first step, and must not park
        // behind a step thread taking the next one.
        this.steps = new ThreadPoolExecutor(STEP_THREADS, STEP_THREADS, 30, TimeUnit.SECONDS,
                new LinkedTransferQueue<>(), daemonThreads("dynamolock-wait-"));
        this.steps.allowCoreThreadTimeOut(true);
        this.callbacks = new ThreadPoolExecutor(CALLBACK_THREADS, CALLBACK_THREADS, 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), daemonThreads("dynamolock-callback-"));
        this.callbacks.allowCoreThreadTimeOut(true);
        this.reactionsWhenBusy = new ThreadPoolExecutor(REACTION_THREADS, REACTION_THREADS, 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), daemonThreads("dynamolock-reaction-"));
        this.reactionsWhenBusy.allowCoreThreadTimeOut(true);
    }

    /** Runs {@code task} on the timer after {@code delayNanos}; {@code null} once shut down. */
    ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
        try {
            return timer.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
        }
        catch (RejectedExecutionException shutDown) {
            return null;
        }
    }

    /** Runs {@code task} on a request thread; {@code false} if every one is busy or the pool is shut down. */
    boolean tryRequest(Runnable task) {
        try {
            requests.execute(task);
            return true;
        }
        catch (RejectedExecutionException busyOrShutDown) {
            return false;
        }
    }

    /**
     * As {@link #tryRequest}, a thread that could not be started (an Error such as OutOfMemoryError "unable to create
     * native thread", near the process's thread limit) counting as every thread busy: the caller keeps {@code task}
     * and tries again, or sends it elsewhere. {@code what} names the task in the log.
     */
    boolean tryRequestOrBusy(Runnable task, String what) {
        boolean started;
        try {
            started = tryRequest(task);
        }
        catch (Throwable notStarted) {
            if (threadStartFailing.compareAndSet(false, true)) {
                log.error("Could not start a request thread for {}; it is kept and tried again or run elsewhere"
                        + " (logged once until a thread starts again)", what, notStarted);
            }
            else {
                log.debug("Could not start a request thread for {} ({})", what, notStarted.toString());
            }
            return false;
        }
        if (started && threadStartFailing.compareAndSet(true, false)) {
            log.info("Request threads start again");
        }
        return started;
    }

    /** Runs {@code task} on a request thread, or on the calling one when every one is busy or none can start. */
    Executor requestsOrCaller() {
        return task -> {
            if (!tryRequestOrBusy(task, "a task")) {
                task.run();
            }
        };
    }

    /**
     * Where lost-lease callbacks run: user code, which may block, so never on the timer (a loss is often found there,
     * a deadline passed), whose every deadline and renewal it would stop (R11, R12). When the callback threads
     * cannot take one (none could be started: an Error), it is handed over again after {@link #BUSY_RETRY}; only once
     * shut down does it run on the calling thread, lost otherwise. Never throws.
     */
    Executor callbacks() {
        return this::handOverCallback;
    }

    private void handOverCallback(Runnable callback) {
        try {
            callbacks.execute(callback);
        }
        catch (Throwable refused) {
            if (!callbacks.isShutdown() && schedule(() -> handOverCallback(callback), BUSY_RETRY.toNanos()) != null) {
                log.debug("Could not hand a lost-lease callback over ({}); trying again shortly", refused.toString());
                return;
            }
            log.warn("Running a lost-lease callback on the calling thread: the template has shut down ({})",
                    refused.toString());
            callback.run();
        }
    }

    /**
     * Where the library's own reactions to a loss run (a lost body cancelled): a request thread each, not in line
     * behind user callbacks, which may block. When every request thread is busy (or none can be started), on the
     * {@link #REACTION_THREADS} reaction threads, in line behind other reactions only. Last, when those cannot take
     * it either (shut down, or no thread can be started at all), on the calling thread: a reaction lost or thrown
     * would leave a lost body running and the loss half handled. But never on the timer while the template runs: it
     * is handed over again after {@link #BUSY_RETRY} instead. Never throws.
     */
    Executor reactions() {
        return this::react;
    }

    private void react(Runnable task) {
        if (tryRequestOrBusy(task, "a reaction to a loss")) {
            return;
        }
        try {
            reactionsWhenBusy.execute(task);
        }
        catch (Throwable refused) {
            if (Thread.currentThread() instanceof TimerThread
                    && schedule(() -> react(task), BUSY_RETRY.toNanos()) != null) {
                log.debug("Could not hand a reaction to a loss over ({}); trying again shortly", refused.toString());
                return;
            }
            log.debug("Running a reaction to a loss on the calling thread ({})", refused.toString());
            task.run();
        }
    }

    /**
     * Runs a waiter's step on a step thread. After shut-down it runs on the calling thread: the step then finds
     * the template closed and ends the wait without a request.
     */
    void step(Runnable task) {
        try {
            steps.execute(task);
        }
        catch (RejectedExecutionException shutDown) {
            task.run();
        }
    }

    /** Shuts the threads down (tasks already given to them still run), then completes {@link #terminated}. */
    void shutdown() {
        timer.shutdown();
        requests.shutdown();
        steps.shutdown();
        callbacks.shutdown();
        reactionsWhenBusy.shutdown();
        terminated.complete(null);
    }

    /** Completes once {@link #shutdown} has run. */
    CompletableFuture<Void> terminated() {
        return terminated;
    }

    /** The timer's threads, told apart so that nothing that may block is run on them. */
    private static ThreadFactory timerThreads() {
        AtomicInteger count = new AtomicInteger();
        return runnable -> new TimerThread(runnable, "dynamolock-lease-timer-" + count.incrementAndGet());
    }

    private static final class TimerThread extends Thread {

        TimerThread(Runnable runnable, String name) {
            super(runnable, name);
            setDaemon(true);
        }
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
