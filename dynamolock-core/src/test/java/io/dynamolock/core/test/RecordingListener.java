package io.dynamolock.core.test;

import io.dynamolock.core.LockAttempt;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockListener;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Records each acquisition's start and outcome as a line ("acquiring order-1", "failed order-1
 * LockQueueFullException"). An outcome whose {@link LockAttempt} was not started, or was ended already, is
 * recorded as "unpaired ...", so every test that checks the lines checks the pairing too.
 */
public final class RecordingListener implements LockListener {

    private final List<String> events = new CopyOnWriteArrayList<>();
    private final Set<LockAttempt> open = ConcurrentHashMap.newKeySet();

    /** What was heard so far, in order. */
    public List<String> events() {
        return events;
    }

    @Override
    public void onAcquiring(LockAttempt attempt) {
        open.add(attempt);
        events.add("acquiring " + attempt.entity());
    }

    @Override
    public void onAcquired(LockAttempt attempt, LockHandle lock, Duration waited) {
        events.add(paired(attempt, lock.entryId().equals(attempt.entryId())) + "acquired " + lock.entity());
    }

    @Override
    public void onNotAcquired(LockAttempt attempt, Duration waited) {
        events.add(paired(attempt, true) + "not acquired " + attempt.entity());
    }

    @Override
    public void onReleased(LockHandle lock, Duration held) {
        events.add("released " + lock.entity());
    }

    @Override
    public void onFailed(LockAttempt attempt, Duration waited, RuntimeException failure) {
        events.add(paired(attempt, true) + "failed " + attempt.entity() + " " + failure.getClass().getSimpleName());
    }

    private String paired(LockAttempt attempt, boolean matches) {
        return open.remove(attempt) && matches ? "" : "unpaired ";
    }
}
