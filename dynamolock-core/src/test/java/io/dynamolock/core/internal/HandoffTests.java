package io.dynamolock.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.LockMode;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** What this JVM's entries of a lock hear of the states its own requests return. */
class HandoffTests {

    private static final LockKey KEY = new LockKey("order-7", "default");

    private final Handoff handoff = new Handoff();

    private Acquisition queued(long ticket) {
        Acquisition entry = new Acquisition(KEY, "pod", Duration.ofSeconds(60), false, LockMode.EXCLUSIVE, 1, null,
                false, Runnable::run, Runnable::run);
        entry.enqueued(ticket, System.nanoTime());
        handoff.register(entry);
        return entry;
    }

    private static QueueState.Entry entry(String id, long ticket) {
        return new QueueState.Entry(id, "pod", ticket, Long.MAX_VALUE, 0);
    }

    @Test
    void anEnqueueTellsEveryEntryOfTheNewOneAndWakesNoWaiter() {
        Acquisition holder = queued(1);
        assertThat(holder.granted()).isTrue();
        Acquisition waiter = queued(2);
        AtomicInteger woken = new AtomicInteger();
        waiter.onWake(woken::incrementAndGet);
        QueueState afterEnqueue = new QueueState(4, 0, List.of(entry(holder.id(), 1), entry(waiter.id(), 2),
                entry("new", 3)));

        handoff.enqueued(KEY, afterEnqueue, 1_234);
        assertThat(holder.known().entries()).extracting(QueueState.Entry::id).contains("new");
        assertThat(holder.known().asOfMillis()).isEqualTo(1_234);
        assertThat(waiter.known().entries()).as("for its hand-over, once it holds").extracting(QueueState.Entry::id)
                .contains("new");
        assertThat(woken).as("an enqueue lets nobody in").hasValue(0);
        assertThat(waiter.takeOffered()).isNull();

        handoff.enqueued(new LockKey("order-8", "default"), new QueueState(4, 0, List.of(entry("other", 3))), 2_000);
        assertThat(holder.known().entries()).as("not another lock's").extracting(QueueState.Entry::id)
                .doesNotContain("other");
    }
}
