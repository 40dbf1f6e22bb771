package io.dynamolock.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Every request thread of a template busy, as in a slow region where answers take long, until released. */
final class BusyRequestThreads {

    private BusyRequestThreads() {
    }

    /** Fills every request thread of {@code workers}; they answer once the returned latch is counted down. */
    static CountDownLatch occupy(Workers workers) throws InterruptedException {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch allStarted = new CountDownLatch(Workers.MAX_REQUEST_THREADS);
        for (int i = 0; i < Workers.MAX_REQUEST_THREADS; i++) {
            assertThat(workers.tryRequest(() -> {
                allStarted.countDown();
                try {
                    release.await();
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            })).isTrue();
        }
        assertThat(allStarted.await(30, TimeUnit.SECONDS)).isTrue();
        return release;
    }
}
