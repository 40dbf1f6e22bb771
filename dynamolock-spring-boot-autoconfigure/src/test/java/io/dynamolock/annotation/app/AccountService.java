package io.dynamolock.annotation.app;

import io.dynamolock.annotation.QueueLocked;
import io.dynamolock.core.LockTemplate;
import java.util.List;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/** {@code @QueueLocked} together with {@code @Transactional}: the lock must cover the commit. */
@Service
public class AccountService {

    private final JdbcTemplate jdbc;
    private final LockTemplate locks;

    public AccountService(JdbcTemplate jdbc, LockTemplate locks) {
        this.jdbc = jdbc;
        this.locks = locks;
    }

    public void open(String id) {
        jdbc.update("insert into account (id, balance) values (?, 0)", id);
    }

    public int balance(String id) {
        return jdbc.queryForObject("select balance from account where id = ?", Integer.class, id);
    }

    /** Reads, then writes the balance: without the lock around the whole transaction, deposits get lost. */
    @Transactional
    @QueueLocked(entity = "'account-' + #id")
    public void deposit(String id, int amount) {
        int balance = balance(id);
        Thread.yield();
        jdbc.update("update account set balance = ? where id = ?", balance + amount, id);
    }

    /** As {@link #deposit}, called by one test only: the warning it is named in comes once per method. */
    @Transactional
    @QueueLocked(entity = "'account-' + #id")
    public void credit(String id, int amount) {
        deposit(id, amount);
    }

    /** As {@link #credit}, for the one test of a caller holding the entity in another namespace (a WARN per method). */
    @Transactional
    @QueueLocked(entity = "'account-' + #id")
    public void refund(String id, int amount) {
        deposit(id, amount);
    }

    /** As {@link #deposit}, in a transaction of its own that commits inside the lock, whoever calls it. */
    @Transactional(propagation = Propagation.REQUIRES_NEW)
    @QueueLocked(entity = "'account-' + #id")
    public void depositApart(String id, int amount) {
        deposit(id, amount);
    }

    /** As depositApart, but protected (Boot's transaction advisor proxies it all the same). */
    @Transactional(propagation = Propagation.REQUIRES_NEW)
    @QueueLocked(entity = "'account-' + #id")
    protected void depositApartProtected(String id, int amount) {
        deposit(id, amount);
    }

    /** Records, at each step of the transaction's end, whether this instance still holds the lock. */
    @Transactional
    @QueueLocked(entity = "'account-' + #id")
    public void depositObserved(String id, int amount, boolean fail, List<String> events) {
        deposit(id, amount);
        TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
            @Override
            public void beforeCommit(boolean readOnly) {
                events.add("beforeCommit held=" + held(id));
            }

            @Override
            public void afterCommit() {
                events.add("afterCommit held=" + held(id));
            }

            @Override
            public void afterCompletion(int status) {
                events.add("afterCompletion " + (status == STATUS_COMMITTED ? "committed" : "rolled back")
                        + " held=" + held(id));
            }
        });
        if (fail) {
            throw new IllegalStateException("roll back");
        }
    }

    private boolean held(String id) {
        return locks.activeLocks().stream().anyMatch(lock -> lock.entity().equals("account-" + id) && lock.holding());
    }
}
