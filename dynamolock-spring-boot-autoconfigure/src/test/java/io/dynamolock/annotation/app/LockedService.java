package io.dynamolock.annotation.app;

import io.dynamolock.annotation.QueueLocked;
import io.dynamolock.core.LockInfo;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.QueueSnapshot;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.springframework.stereotype.Service;

/** Annotated methods that report the locks this instance holds while they run. */
@Service
public class LockedService implements Inventory {

    private final LockTemplate locks;
    private final NestedService nested;
    private final AtomicInteger calls = new AtomicInteger();

    public LockedService(LockTemplate locks, NestedService nested) {
        this.locks = locks;
        this.nested = nested;
    }

    public int calls() {
        return calls.get();
    }

    @QueueLocked(entity = "#order.customer.id + '/' + #order.id", namespace = "orders")
    public List<LockInfo> place(Order order, int quantity) {
        return held();
    }

    @QueueLocked(entity = "#region + ':' + #p1 + ':' + #root.args[2]")
    public List<LockInfo> ship(String region, int shard, String carrier) {
        return held();
    }

    @QueueLocked(entity = "@lockKeys.sku(#sku)")
    public List<LockInfo> reserve(String sku) {
        return held();
    }

    @QueueLocked(entity = "#id", namespace = "${test.lock.namespace}", maxWait = "${test.lock.wait}")
    public List<LockInfo> placeholders(String id) {
        calls.incrementAndGet();
        return held();
    }

    /** The lock's queue as stored while the method runs. */
    @QueueLocked(entity = "#id", failClosed = true)
    public List<QueueSnapshot.Entry> failClosed(String id) {
        return locks.queue(id, null).entries();
    }

    @QueueLocked(entity = "#id", maxWait = "0")
    public List<LockInfo> noWait(String id) {
        calls.incrementAndGet();
        return held();
    }

    @QueueLocked(entity = "#id", maxWait = "300ms")
    public List<LockInfo> shortWait(String id) {
        calls.incrementAndGet();
        return held();
    }

    @QueueLocked(entity = "#id")
    public void anyEntity(String id) {
        calls.incrementAndGet();
    }

    /** Any key, checked only when called: its declared type says nothing of the value's toString(). */
    @QueueLocked(entity = "#key")
    public void anyKey(Object key) {
        calls.incrementAndGet();
    }

    /** Any key, checked only when called, and the entities held while the call runs. */
    @QueueLocked(entity = "#key")
    public List<String> anyKeyHeld(Object key) {
        calls.incrementAndGet();
        return held().stream().map(LockInfo::entity).toList();
    }

    /** An optional key: the entity is its value, the entities its elements if it is a collection. */
    @QueueLocked(entity = "#id")
    public List<String> optionalEntity(Optional<?> id) {
        calls.incrementAndGet();
        return held().stream().map(LockInfo::entity).toList();
    }

    /** Returns what it is given through a return type that tells the lock nothing of it. */
    @QueueLocked(entity = "#id")
    public Object untyped(String id, Object returned) {
        calls.incrementAndGet();
        return returned;
    }

    /** Returns what {@code work} gives through a type variable. */
    @QueueLocked(entity = "#id")
    public <T> T supplied(String id, Supplier<T> work) {
        calls.incrementAndGet();
        return work.get();
    }

    @OrderLock
    public List<LockInfo> meta(String orderId) {
        return held();
    }

    @Override
    public List<LockInfo> count(String sku) {
        return held();
    }

    @QueueLocked(entity = "#id")
    public List<LockInfo> outer(String id) {
        return nested.inner(id);
    }

    @QueueLocked(entity = "#id")
    public List<LockInfo> outerThenAsync(String id) {
        return nested.asyncNoWait(id).join();
    }

    @QueueLocked(entity = "#id")
    public List<LockInfo> asyncThenSync(String id) {
        return nested.syncInsideAsync(id).join();
    }

    @QueueLocked(entity = "#id")
    public CompletableFuture<String> async(String id, CompletableFuture<String> gate) {
        return gate.thenApply(value -> value + "!");
    }

    /** A future handed out by a synchronous method (a future return type would make the method asynchronous). */
    public record Started(CompletableFuture<String> future) {
    }

    /** Starts an asynchronous method that joins this method's lock and outlives this method. */
    @QueueLocked(entity = "#id")
    public Started syncStartsAsync(String id, CompletableFuture<String> gate) {
        return new Started(nested.asyncGate(id, gate));
    }

    @QueueLocked(entity = "#id")
    public CompletableFuture<String> asyncNull(String id) {
        return null;
    }

    @QueueLocked(entity = "#id")
    public void fail(String id) {
        throw new IllegalStateException("failed under the lock");
    }

    private List<LockInfo> held() {
        return locks.activeLocks().stream().filter(LockInfo::holding).toList();
    }
}
