package io.dynamolock.core.test;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;

/**
 * Samples the states of Reactor Netty's event-loop threads every millisecond until closed, and records any found
 * WAITING or TIMED_WAITING: parked or blocked in a call, where an idle event loop waits in a native select
 * (RUNNABLE). BLOCKED is left out: class loading and Netty's allocators contend briefly for monitors on every
 * event loop. So is a wait for the lock of an executor's queue or worker set while handing it a task
 * ({@link #isExecutorHandOff}): held for a few instructions, never across a request or user code, and allowed by
 * Reactor's own BlockHound integration for the same reason. (BlockHound was tried: instrumenting the JVM that also
 * runs DynamoDB Local slowed it into request time-outs, and it did not flag a blocking handler on Reactor Netty
 * 4.2's threads.)
 */
public final class EventLoopProbe implements AutoCloseable {

    /** Where an executor takes a lock to queue a task or to add or remove a worker. */
    private static final Set<String> HAND_OFFS = Set.of(
            "java.util.concurrent.LinkedBlockingQueue.signalNotEmpty",
            "java.util.concurrent.LinkedBlockingQueue.offer",
            "java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.offer",
            "java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.remove",
            "java.util.concurrent.ThreadPoolExecutor.addWorker",
            "java.util.concurrent.ThreadPoolExecutor.processWorkerExit");

    private final List<String> blocked = new CopyOnWriteArrayList<>();
    private final Thread sampler;
    private volatile boolean running = true;

    public EventLoopProbe() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        sampler = new Thread(() -> {
            while (running) {
                for (ThreadInfo info : threads.dumpAllThreads(false, false, 64)) {
                    Thread.State state = info.getThreadState();
                    if (isEventLoop(info.getThreadName())
                            && (state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING)
                            && !isExecutorHandOff(info.getStackTrace())) {
                        blocked.add(info.getThreadName() + " " + state + " at " + List.of(info.getStackTrace()));
                    }
                }
                LockSupport.parkNanos(1_000_000);
            }
        }, "event-loop-probe");
        sampler.setDaemon(true);
        sampler.start();
    }

    /** Reactor Netty's event loops: a WebFlux server's ({@code webflux-http-epoll-1}) and the client's. */
    public static boolean isEventLoop(String thread) {
        return thread.startsWith("webflux-http-") || thread.startsWith("reactor-http-");
    }

    /**
     * Whether {@code stack} waits for a lock that an executor takes to queue a task or to add a worker: the first
     * frame past the lock's own is one of those methods.
     */
    public static boolean isExecutorHandOff(StackTraceElement[] stack) {
        for (StackTraceElement frame : stack) {
            String type = frame.getClassName();
            if (type.startsWith("java.util.concurrent.locks.") || type.equals("jdk.internal.misc.Unsafe")) {
                continue;
            }
            return HAND_OFFS.contains(type + "." + frame.getMethodName());
        }
        return false;
    }

    /** What was seen parked or waiting on an event loop, with its stack. */
    public List<String> blocked() {
        return blocked;
    }

    @Override
    public void close() {
        running = false;
    }
}
