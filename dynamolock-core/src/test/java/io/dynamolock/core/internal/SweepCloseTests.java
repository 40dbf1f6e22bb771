package io.dynamolock.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** close() and the pending late-enqueue sweeps: terminated() (the client's owner closes it then) waits for them. */
class SweepCloseTests {

    /**
     * Two sweeps pending at close(): the first one's answer, if it comes before close() has handed over the second,
     * brings the count of closing sweeps to zero and shuts the workers down (terminated() completes, the owner
     * closes the client, as OwnedDynamoDbClient does); the second is then sent on the caller, on a closed client.
     */
    @Test
    void closeDoesNotTerminateBeforeEveryPendingSweepIsSent() throws Exception {
        int trials = 200;
        int late = 0;
        for (int t = 0; t < trials; t++) {
            Workers workers = new Workers();
            Leases leases = new Leases(null, Clock.systemUTC(), Duration.ofSeconds(10), null, workers);
            AtomicBoolean clientClosed = new AtomicBoolean();
            workers.terminated().whenComplete((done, never) -> clientClosed.set(true)); // the owner closes it
            AtomicInteger sentOnClosedClient = new AtomicInteger();
            for (int i = 0; i < 4; i++) {
                leases.sweepLater("entry-" + i, Duration.ofHours(1), () -> {
                    if (clientClosed.get()) {
                        sentOnClosedClient.incrementAndGet();
                    }
                    return false;
                });
            }
            leases.close();
            workers.terminated().get(10, TimeUnit.SECONDS);
            if (sentOnClosedClient.get() > 0) {
                late++;
            }
        }
        assertThat(late).as("trials in which a sweep was sent after terminated() completed").isZero();
    }

    /**
     * Every request thread busy (the documented fall-back: the caller sends): the first sweep, sent on the caller,
     * shuts the workers down as it ends, before close() has sent the others.
     */
    @Test
    void closeOnBusyRequestThreadsDoesNotTerminateBeforeTheLastSweep() throws Exception {
        Workers workers = new Workers();
        CountDownLatch release = BusyRequestThreads.occupy(workers);
        AtomicInteger started = new AtomicInteger();
        try {
            Leases leases = new Leases(null, Clock.systemUTC(), Duration.ofSeconds(10), null, workers);
            AtomicBoolean clientClosed = new AtomicBoolean();
            workers.terminated().whenComplete((done, never) -> clientClosed.set(true));
            AtomicInteger sentOnClosedClient = new AtomicInteger();
            for (int i = 0; i < 3; i++) {
                leases.sweepLater("entry-" + i, Duration.ofHours(1), () -> {
                    started.incrementAndGet();
                    if (clientClosed.get()) {
                        sentOnClosedClient.incrementAndGet();
                    }
                    return false;
                });
            }
            leases.close();
            assertThat(started).hasValue(3);
            assertThat(sentOnClosedClient).as("sweeps sent after terminated() completed").hasValue(0);
        }
        finally {
            release.countDown();
        }
    }

    /**
     * A sweep fired by its timer (one lease after the entry left) is in flight when close() comes: terminated()
     * waits for it, not only for what close() sends.
     */
    @Test
    void terminatedWaitsForATimerSweepInFlightAtClose() throws Exception {
        Workers workers = new Workers();
        Leases leases = new Leases(null, Clock.systemUTC(), Duration.ofSeconds(10), null, workers);
        CountDownLatch inFlight = new CountDownLatch(1);
        CountDownLatch answer = new CountDownLatch(1);
        AtomicInteger sends = new AtomicInteger();
        leases.sweepLater("entry", Duration.ofMillis(1), () -> {
            if (sends.incrementAndGet() == 1) {
                inFlight.countDown();
                try {
                    answer.await(10, TimeUnit.SECONDS);
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            }
            return false;
        });
        assertThat(inFlight.await(10, TimeUnit.SECONDS)).isTrue();
        AtomicBoolean firstAnswered = new AtomicBoolean();
        AtomicBoolean answeredAtTermination = new AtomicBoolean(true);
        workers.terminated().whenComplete((done, never) -> answeredAtTermination.set(firstAnswered.get()));
        leases.close();
        boolean terminatedEarly;
        try {
            terminatedEarly = waitTerminated(workers);
        }
        finally {
            firstAnswered.set(true);
            answer.countDown();
        }
        assertThat(terminatedEarly && !answeredAtTermination.get())
                .as("terminated() completed while the timer's sweep was still in flight").isFalse();
    }

    private static boolean waitTerminated(Workers workers) {
        try {
            workers.terminated().get(2, TimeUnit.SECONDS);
            return true;
        }
        catch (Exception timedOut) {
            return false;
        }
    }
}
