package io.dynamolock.annotation;

import java.time.Duration;
import org.springframework.context.ApplicationEvent;

/**
 * A {@link QueueLocked} method with {@link WaitTimeoutPolicy#SKIP} did not run because its lock
 * was busy. Published to the application context; dynamolock's metrics count it as
 * {@code dynamolock.skipped}.
 */
public class QueueLockedSkippedEvent extends ApplicationEvent {

    private final String method;
    private final String entity;
    private final String namespace;
    private final Duration waited;

    /**
     * @param method    the skipped method, as {@code Class.method(ParamTypes)}
     * @param entity    the lock's entity
     * @param namespace the lock's namespace
     * @param waited    how long it waited before skipping
     */
    public QueueLockedSkippedEvent(Object source, String method, String entity, String namespace, Duration waited) {
        super(source);
        this.method = method;
        this.entity = entity;
        this.namespace = namespace;
        this.waited = waited;
    }

    public String method() {
        return method;
    }

    public String entity() {
        return entity;
    }

    public String namespace() {
        return namespace;
    }

    public Duration waited() {
        return waited;
    }
}
