package io.dynamolock.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.LockMode;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The mailbox through which releases and heartbeats of other threads hand queue states to a waiter. */
class AcquisitionTests {

    private final AtomicInteger wakeUps = new AtomicInteger();
    private final Acquisition entry = new Acquisition(new LockKey("e", "default"), "pod", Duration.ofSeconds(60), false,
            LockMode.EXCLUSIVE, 1, null, false, Runnable::run, Runnable::run);

    @Test
    void aLateOlderStateNeverHidesANewerOne() {
        entry.onWake(wakeUps::incrementAndGet); // no ticket set: states may arrive while the enqueue is in flight
        QueueState twoAhead = queue(10, 20, 30);
        QueueState oneAhead = queue(20, 30);

        entry.offer(oneAhead); // the second release's state arrives first...
        entry.offer(twoAhead); // ...the first release's after it
        assertThat(entry.takeOffered()).isSameAs(oneAhead);
        assertThat(wakeUps.get()).as("each offer wakes the waiter").isEqualTo(2);

        QueueState renewed = queue(20, 30);
        entry.offer(oneAhead);
        entry.offer(renewed);
        assertThat(entry.takeOffered()).as("as new: the later one (fresher expiries)").isSameAs(renewed);
        entry.offer(queue(10, 20));
        assertThat(entry.takeOffered()).as("a state without our entry counts only if nothing else came")
                .isNotNull();
        assertThat(entry.isNewer(queue(10, 20), oneAhead)).isFalse();
    }

    private QueueState queue(long... tickets) {
        List<QueueState.Entry> entries = new java.util.ArrayList<>();
        for (long ticket : tickets) {
            entries.add(new QueueState.Entry(ticket == 30 ? entry.id() : "other-" + ticket, "pod", ticket, Long.MAX_VALUE, 0));
        }
        return new QueueState(100, 0, entries);
    }
}
