package io.dynamolock.bench;

import java.lang.management.ManagementFactory;

/** What a benchmark JVM reads about itself: heap in use after garbage collection, and threads by name. */
final class JvmProbe {

    private JvmProbe() {
    }

    /** Heap in use after a few collections, so that garbage not yet collected does not count. */
    static long heapAfterGc() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** Live threads whose name starts with {@code prefix} (dynamolock names its pools). */
    static int threadsNamed(String prefix) {
        return (int) Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.getName().startsWith(prefix)).count();
    }
}
