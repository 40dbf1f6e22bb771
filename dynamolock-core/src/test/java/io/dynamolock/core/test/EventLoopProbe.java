package io.dynamolock.core.test;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;

/**
 * Samples the states of Reactor Netty's event-loop threads every millisecond until closed, and records any found
 * WAITING or TIMED_WAITING: parked or blocked in a call, where an idle event loop waits in a native select
 * (RUNNABLE). BLOCKED is left out: class loading and Netty's allocators contend briefly for monitors on every
 * event loop. (BlockHound was tried: instrumenting the JVM that also runs DynamoDB Local slowed it into request
 * time-outs, and it did not flag a blocking handler on Reactor Netty 4.2's threads.)
 */
public final class EventLoopProbe implements AutoCloseable {

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
                            && (state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING)) {
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

    /** What was seen parked or waiting on an event loop, with its stack. */
    public List<String> blocked() {
        return blocked;
    }

    @Override
    public void close() {
        running = false;
    }
}
