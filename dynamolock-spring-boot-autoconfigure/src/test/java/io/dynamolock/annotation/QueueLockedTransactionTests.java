package io.dynamolock.annotation;

import static io.dynamolock.autoconfigure.DynamoDbLocalProperties.race;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import io.dynamolock.annotation.app.AccountService;
import io.dynamolock.annotation.app.LockTestApplication.AcquireProbe;
import io.dynamolock.core.LockTemplate;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.aop.Advisor;
import org.springframework.aop.framework.Advised;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.transaction.interceptor.TransactionInterceptor;

/**
 * The lock advisor wraps Boot's {@code @Transactional} advisor (H2 and Spring's
 * {@code JdbcTransactionManager}): the lock is taken before the transaction begins and
 * released after it commits or rolls back.
 */
class QueueLockedTransactionTests extends QueueLockedTestSupport {

    @Autowired
    AccountService accounts;

    @Autowired
    AcquireProbe probe;

    @Autowired
    LockTemplate locks;

    @Test
    void lockAdvisorIsOutsideTransactionAdvisor() {
        Advisor[] advisors = ((Advised) accounts).getAdvisors();
        int lock = indexOf(advisors, QueueLockedAdvisor.class);
        int transaction = -1;
        for (int i = 0; i < advisors.length; i++) {
            if (advisors[i].getAdvice() instanceof TransactionInterceptor) {
                transaction = i;
            }
        }
        assertThat(lock).isNotNegative();
        assertThat(transaction).isGreaterThan(lock);
    }

    @Test
    void lockIsTakenBeforeTheTransactionBeginsAndHeldThroughCommit() {
        accounts.open("a-1");
        List<String> events = new CopyOnWriteArrayList<>();
        accounts.depositObserved("a-1", 5, false, events);
        assertThat(probe.transactionActiveWhenAcquired("account-a-1")).isFalse();
        assertThat(events).containsExactly("beforeCommit held=true", "afterCommit held=true",
                "afterCompletion committed held=true");
        assertThat(heldAccountLocks()).isZero();
        assertThat(accounts.balance("a-1")).isEqualTo(5);
    }

    @Test
    void lockIsHeldThroughRollback() {
        accounts.open("a-2");
        List<String> events = new CopyOnWriteArrayList<>();
        assertThatIllegalStateException().isThrownBy(() -> accounts.depositObserved("a-2", 5, true, events));
        assertThat(events).containsExactly("afterCompletion rolled back held=true");
        assertThat(heldAccountLocks()).isZero();
        assertThat(accounts.balance("a-2")).isZero();
    }

    @Test
    void concurrentTransactionalReadModifyWritesLoseNoUpdate() throws Exception {
        accounts.open("a-3");
        int threads = 4;
        int deposits = 5;
        race(threads, deposits, () -> {
            accounts.deposit("a-3", 1);
            return null;
        });
        assertThat(accounts.balance("a-3")).isEqualTo(threads * deposits);
    }

    private long heldAccountLocks() {
        return locks.activeLocks().stream().filter(lock -> lock.entity().startsWith("account-")).count();
    }

    private static int indexOf(Advisor[] advisors, Class<?> type) {
        for (int i = 0; i < advisors.length; i++) {
            if (type.isInstance(advisors[i])) {
                return i;
            }
        }
        return -1;
    }
}
