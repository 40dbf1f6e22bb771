package io.dynamolock.annotation.app;

import io.dynamolock.annotation.QueueLocked;
import io.dynamolock.core.LockInfo;
import io.dynamolock.core.LockMode;
import io.dynamolock.core.LockTemplate;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Mono;

/** Locks of several entities, shared locks and semaphores through {@code @QueueLocked}. */
@Service
public class TransferService {

    private final LockTemplate locks;
    private final Map<String, Long> balances = new ConcurrentHashMap<>();

    public TransferService(LockTemplate locks) {
        this.locks = locks;
    }

    public long balance(String account) {
        return balances.getOrDefault(account, 0L);
    }

    /** Reads both balances, then writes both: a race between two transfers of one account would lose money. */
    @QueueLocked(entity = {"'acct-' + #from", "'acct-' + #to"}, maxWait = "60s")
    public void transfer(String from, String to, long amount) {
        long debited = balance(from) - amount;
        long credited = balance(to) + amount;
        Thread.yield();
        balances.put(from, debited);
        balances.put(to, credited);
    }

    /** One expression whose value is a collection: each element is locked. */
    @QueueLocked(entity = "#ids")
    public List<LockInfo> all(List<String> ids) {
        return held();
    }

    @QueueLocked(entity = "#id", mode = LockMode.SHARED, maxWait = "0")
    public List<LockInfo> read(String id) {
        return held();
    }

    @QueueLocked(entity = "'partner-api'", permits = 2, maxWait = "0")
    public List<LockInfo> callPartner() {
        return held();
    }

    @QueueLocked(entity = {"'m-' + #a", "'m-' + #b"})
    public Mono<List<LockInfo>> both(String a, String b) {
        return Mono.fromSupplier(this::held);
    }

    private List<LockInfo> held() {
        return locks.activeLocks().stream().filter(LockInfo::holding).toList();
    }
}
