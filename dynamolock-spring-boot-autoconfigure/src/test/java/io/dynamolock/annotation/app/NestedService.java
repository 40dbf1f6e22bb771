package io.dynamolock.annotation.app;

import io.dynamolock.annotation.QueueLocked;
import io.dynamolock.core.LockInfo;
import io.dynamolock.core.LockTemplate;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.springframework.context.annotation.Lazy;
import org.springframework.stereotype.Service;

/** Called from {@link LockedService}'s locked methods, for re-entry. */
@Service
public class NestedService {

    private final LockTemplate locks;
    private final LockedService outer;

    public NestedService(LockTemplate locks, @Lazy LockedService outer) {
        this.locks = locks;
        this.outer = outer;
    }

    @QueueLocked(entity = "#id", maxWait = "0")
    public List<LockInfo> inner(String id) {
        return held();
    }

    @QueueLocked(entity = "#id", maxWait = "0")
    public CompletableFuture<List<LockInfo>> asyncNoWait(String id) {
        return CompletableFuture.completedFuture(held());
    }

    @QueueLocked(entity = "#id", maxWait = "0")
    public CompletableFuture<String> asyncGate(String id, CompletableFuture<String> gate) {
        return gate;
    }

    /** An asynchronous method whose body calls a synchronous one for the same lock. */
    @QueueLocked(entity = "#id", maxWait = "0")
    public CompletableFuture<List<LockInfo>> syncInsideAsync(String id) {
        return CompletableFuture.completedFuture(outer.shortWait(id));
    }

    private List<LockInfo> held() {
        return locks.activeLocks().stream().filter(LockInfo::holding).toList();
    }
}
