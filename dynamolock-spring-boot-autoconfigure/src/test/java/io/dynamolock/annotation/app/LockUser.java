package io.dynamolock.annotation.app;

import io.dynamolock.core.LockTemplate;
import java.time.Duration;
import org.springframework.stereotype.Component;

/** A user bean that takes locks through the injected {@link LockTemplate}. */
@Component
public class LockUser {

    private final LockTemplate locks;

    public LockUser(LockTemplate locks) {
        this.locks = locks;
    }

    public LockTemplate lockTemplate() {
        return locks;
    }

    public long fencingTokenOf(String entity) {
        return locks.execute(entity, Duration.ofSeconds(5), lock -> lock.fencingToken());
    }
}
