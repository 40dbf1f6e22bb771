package io.dynamolock.samples.orders;

import io.dynamolock.core.LockAttempt;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockListener;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * Prints every grant of this instance with its ticket (the fencing token) and how long it waited. It sees API
 * requests too, so it keeps only the latest {@link #GRANTS_PER_ENTITY} grants of the latest {@link #ENTITIES}
 * entities locked: what the demo reads back, in bounded memory and at a constant cost per grant.
 */
@Component
public class GrantLog implements LockListener {

    static final int GRANTS_PER_ENTITY = 256;
    static final int ENTITIES = 256;

    private static final Logger log = LoggerFactory.getLogger("demo");

    /** One grant, in grant order. */
    public record Grant(String entity, long ticket, Duration waited, String thread) {
    }

    /** An entity's latest grants, and how many it has had. */
    private static final class Granted {
        final Deque<Grant> latest = new ArrayDeque<>();
        long count;
    }

    /** Least recently locked (or read) first. */
    private final Map<String, Granted> entities = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Granted> eldest) {
            return size() > ENTITIES;
        }
    };

    @Override
    public void onAcquired(LockAttempt attempt, LockHandle lock, Duration waited) {
        Grant grant = new Grant(lock.entity(), lock.fencingToken(), waited, Thread.currentThread().getName());
        long count;
        synchronized (entities) {
            Granted granted = entities.computeIfAbsent(grant.entity(), entity -> new Granted());
            if (granted.latest.size() == GRANTS_PER_ENTITY) {
                granted.latest.removeFirst();
            }
            granted.latest.addLast(grant);
            count = ++granted.count;
        }
        log.info("  grant {}  ticket {}  waited {} ms  ({})", String.format("%2d", count), grant.ticket(),
                String.format("%4d", waited.toMillis()), grant.thread());
    }

    /** The latest grants of {@code entity} in this instance, in grant order. */
    public List<Grant> grantsOf(String entity) {
        synchronized (entities) {
            Granted granted = entities.get(entity);
            return granted == null ? List.of() : List.copyOf(granted.latest);
        }
    }
}
