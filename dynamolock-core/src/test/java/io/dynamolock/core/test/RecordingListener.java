package io.dynamolock.core.test;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockListener;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Records each acquisition's start and outcome as a line ("acquiring order-1", "failed order-1 LockQueueFullException"). */
public final class RecordingListener implements LockListener {

    private final List<String> events = new CopyOnWriteArrayList<>();

    /** What was heard so far, in order. */
    public List<String> events() {
        return events;
    }

    @Override
    public void onAcquiring(String entity, String namespace) {
        events.add("acquiring " + entity);
    }

    @Override
    public void onAcquired(LockHandle lock, Duration waited) {
        events.add("acquired " + lock.entity());
    }

    @Override
    public void onNotAcquired(String entity, String namespace, Duration waited) {
        events.add("not acquired " + entity);
    }

    @Override
    public void onReleased(LockHandle lock, Duration held) {
        events.add("released " + lock.entity());
    }

    @Override
    public void onFailed(String entity, String namespace, Duration waited, RuntimeException failure) {
        events.add("failed " + entity + " " + failure.getClass().getSimpleName());
    }
}
