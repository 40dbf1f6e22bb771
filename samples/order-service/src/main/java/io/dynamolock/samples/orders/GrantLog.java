package io.dynamolock.samples.orders;

import io.dynamolock.core.LockAttempt;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockListener;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/** Prints every grant of this instance with its ticket (the fencing token) and how long it waited. */
@Component
public class GrantLog implements LockListener {

    private static final Logger log = LoggerFactory.getLogger("demo");

    /** One grant, in grant order. */
    public record Grant(String entity, long ticket, Duration waited, String thread) {
    }

    private final List<Grant> grants = new CopyOnWriteArrayList<>();

    @Override
    public void onAcquired(LockAttempt attempt, LockHandle lock, Duration waited) {
        Grant grant = new Grant(lock.entity(), lock.fencingToken(), waited, Thread.currentThread().getName());
        grants.add(grant);
        log.info("  grant {}  ticket {}  waited {} ms  ({})", String.format("%2d", count(lock.entity())),
                grant.ticket(), String.format("%4d", waited.toMillis()), grant.thread());
    }

    public List<Grant> grantsOf(String entity) {
        return grants.stream().filter(g -> g.entity().equals(entity)).toList();
    }

    private long count(String entity) {
        return grants.stream().filter(g -> g.entity().equals(entity)).count();
    }
}
