package io.dynamolock.annotation;

import io.dynamolock.core.LockHandle;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The locks of blocking {@code @QueueLocked} methods that ran inside a transaction their caller had begun: each is
 * released when that transaction completes, not when its method returns. Released at the return, the next holder
 * could read the state the method wrote before the caller's transaction commits it, and overwrite it: a lost
 * update, the very thing the lock is there to prevent. (A method whose own {@code @Transactional} begins inside the
 * lock needs none of this: its transaction has completed by its return.) Before the commit, a lease lost meanwhile
 * fails the commit, as {@code on-lost-lease} says; later calls in the same transaction join the held lock, as nested
 * calls do. Loaded only with spring-tx on the class path.
 */
final class TransactionBoundHolds implements TransactionSynchronization {

    private static final Logger log = LoggerFactory.getLogger(TransactionBoundHolds.class);

    /** One lock held for the transaction, and what its release and loss report need. */
    record Held(LockHandle lock, LockedMethod locked, long grantedAtNanos) {
    }

    /** Reports a lost lease as the interceptor does: throws under {@code on-lost-lease: fail}, else logs. */
    interface LossReport {

        void lost(Held held);
    }

    private final List<Held> holds = new ArrayList<>();
    private final LossReport lossReport;

    private TransactionBoundHolds(LossReport lossReport) {
        this.lossReport = lossReport;
    }

    /** Whether the calling thread runs inside a transaction that will commit or roll back later. */
    static boolean inTransaction() {
        return TransactionSynchronizationManager.isActualTransactionActive()
                && TransactionSynchronizationManager.isSynchronizationActive();
    }

    /** The locks held for the current transaction (none outside one); a suspended transaction's are not its. */
    static List<LockHandle> current() {
        TransactionBoundHolds bound = bound();
        return bound == null ? List.of() : bound.holds.stream().map(Held::lock).toList();
    }

    /** Holds {@code held} until the current transaction ({@link #inTransaction()}) completes. */
    static void holdUntilCompletion(Held held, LossReport lossReport) {
        TransactionBoundHolds bound = bound();
        if (bound == null) {
            bound = new TransactionBoundHolds(lossReport);
            TransactionSynchronizationManager.registerSynchronization(bound);
        }
        bound.holds.add(held);
    }

    private static TransactionBoundHolds bound() {
        for (TransactionSynchronization synchronization : TransactionSynchronizationManager.getSynchronizations()) {
            if (synchronization instanceof TransactionBoundHolds holds) {
                return holds;
            }
        }
        return null;
    }

    @Override
    public void beforeCommit(boolean readOnly) {
        for (Held held : holds) {
            if (!held.lock().isValid()) {
                lossReport.lost(held); // under on-lost-lease: fail, the transaction rolls back
            }
        }
    }

    @Override
    public void afterCompletion(int status) {
        for (int i = holds.size() - 1; i >= 0; i--) {
            Held held = holds.get(i);
            try {
                long remaining = held.locked().minHold() == null ? 0
                        : held.grantedAtNanos() + held.locked().minHold().toNanos() - System.nanoTime();
                held.lock().releaseAfter(java.time.Duration.ofNanos(remaining));
            }
            catch (RuntimeException ex) {
                // Nobody to tell but the log: the transaction is over. The lease ends by itself, as on a crash.
                log.warn("Could not release {} of {} after its transaction completed", held.lock(),
                        held.locked().description(), ex);
            }
        }
    }
}
