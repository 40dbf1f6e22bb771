package io.dynamolock.core.test;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** What the probe forgives on an event loop: only the lock an executor takes to queue a task. */
class EventLoopProbeTests {

    @Test
    void aWaitToQueueATaskOnAnExecutorIsAHandOff() {
        assertThat(EventLoopProbe.isExecutorHandOff(stack(
                "jdk.internal.misc.Unsafe.park",
                "java.util.concurrent.locks.LockSupport.park",
                "java.util.concurrent.locks.AbstractQueuedSynchronizer.acquire",
                "java.util.concurrent.locks.ReentrantLock.lock",
                "java.util.concurrent.LinkedBlockingQueue.signalNotEmpty",
                "java.util.concurrent.LinkedBlockingQueue.offer",
                "java.util.concurrent.ThreadPoolExecutor.execute"))).isTrue();
    }

    @Test
    void waitingForAFutureIsNot() {
        assertThat(EventLoopProbe.isExecutorHandOff(stack(
                "jdk.internal.misc.Unsafe.park",
                "java.util.concurrent.locks.LockSupport.parkNanos",
                "java.util.concurrent.CompletableFuture$Signaller.block",
                "java.util.concurrent.ForkJoinPool.managedBlock",
                "java.util.concurrent.CompletableFuture.timedGet"))).isFalse();
    }

    @Test
    void anyOtherLockIsNot() {
        assertThat(EventLoopProbe.isExecutorHandOff(stack(
                "jdk.internal.misc.Unsafe.park",
                "java.util.concurrent.locks.LockSupport.park",
                "java.util.concurrent.locks.ReentrantLock.lock",
                "org.springframework.util.ConcurrentReferenceHashMap$Segment.doTask",
                "java.util.concurrent.LinkedBlockingQueue.offer"))).isFalse();
    }

    private static StackTraceElement[] stack(String... frames) {
        StackTraceElement[] stack = new StackTraceElement[frames.length];
        for (int i = 0; i < frames.length; i++) {
            int dot = frames[i].lastIndexOf('.');
            stack[i] = new StackTraceElement(frames[i].substring(0, dot), frames[i].substring(dot + 1), null, -1);
        }
        return stack;
    }
}
