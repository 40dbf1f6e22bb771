package io.dynamolock.annotation;

import static io.dynamolock.autoconfigure.DynamoDbLocalProperties.race;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import io.dynamolock.annotation.app.AccountService;
import io.dynamolock.annotation.app.ProtectedCaller;
import io.dynamolock.annotation.app.LockTestApplication.AcquireProbe;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Pattern;
import io.dynamolock.autoconfigure.DynamoDbLocalProperties;
import io.dynamolock.autoconfigure.DynamoLockAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.core.Ordered;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.aop.Advisor;
import org.springframework.aop.framework.Advised;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.interceptor.TransactionInterceptor;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The lock advisor wraps Boot's {@code @Transactional} advisor (H2 and Spring's
 * {@code JdbcTransactionManager}): the lock is taken before the transaction begins and
 * released after it commits or rolls back.
 */
@ExtendWith(OutputCaptureExtension.class)
class QueueLockedTransactionTests extends QueueLockedTestSupport {

    @Autowired
    AccountService accounts;

    @Autowired
    AcquireProbe probe;

    @Autowired
    LockTemplate locks;

    @Autowired
    PlatformTransactionManager transactionManager;

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

    /**
     * Called inside a transaction its caller began, the method's lock is released before that transaction commits:
     * the application is told once per method, with the fix; a call that begins its own transaction is not named.
     */
    @Test
    void aCallInsideTheCallersTransactionIsNamedOnceWithTheFix(CapturedOutput output) {
        accounts.open("a-4");
        accounts.credit("a-4", 1);
        String warning = AccountService.class.getName() + ".credit(String, int) was called inside a transaction its"
                + " caller began: its lock is released when it returns, before that transaction commits";
        assertThat(output.getAll()).doesNotContain(warning);
        TransactionTemplate transaction = new TransactionTemplate(transactionManager);
        transaction.executeWithoutResult(status -> {
            accounts.credit("a-4", 1);
            accounts.credit("a-4", 1);
        });
        assertThat(output.getAll().split(Pattern.quote(warning), -1)).as("times named").hasSize(2);
        assertThat(output.getAll()).contains("Lock the method that begins the transaction");
        assertThat(accounts.balance("a-4")).isEqualTo(3);
    }

    /**
     * Not named where the lock does cover the commit: a call that joins a hold the transaction began inside, and a
     * method whose own transaction (REQUIRES_NEW) commits inside its lock.
     */
    @Test
    void aCallWhoseWritesCommitInsideTheLockIsNotNamed(CapturedOutput output) {
        accounts.open("a-5");
        TransactionTemplate transaction = new TransactionTemplate(transactionManager);
        locks.execute(LockRequest.of("account-a-5"), held -> {
            transaction.executeWithoutResult(status -> accounts.deposit("a-5", 1));
            return null;
        });
        transaction.executeWithoutResult(status -> accounts.depositApart("a-5", 1));
        assertThat(output.getAll()).doesNotContain("was called inside a transaction its caller began");
        assertThat(accounts.balance("a-5")).isEqualTo(2);
    }

    /**
     * A hold of the entity in another namespace is another lock: the method (default namespace) takes its own,
     * released before its caller's transaction commits, and is named as any other call inside that transaction.
     */
    @Test
    void aCallInsideTheCallersTransactionIsNamedThoughTheCallerHoldsTheEntityInAnotherNamespace(
            CapturedOutput output) {
        accounts.open("a-7");
        TransactionTemplate transaction = new TransactionTemplate(transactionManager);
        locks.execute(LockRequest.builder("account-a-7").namespace("billing").build(), held -> {
            transaction.executeWithoutResult(status -> accounts.refund("a-7", 1));
            return null;
        });
        assertThat(output.getAll()).contains(AccountService.class.getName() + ".refund(String, int) was called"
                + " inside a transaction its caller began");
        assertThat(accounts.balance("a-7")).isEqualTo(1);
    }

    /** A protected REQUIRES_NEW method commits inside its lock as a public one does. */
    @Test
    void aProtectedMethodWhoseOwnTransactionCommitsApartIsNotNamed(CapturedOutput output) {
        accounts.open("a-6");
        TransactionTemplate transaction = new TransactionTemplate(transactionManager);
        transaction.executeWithoutResult(status -> new ProtectedCaller().call(accounts, "a-6"));
        assertThat(accounts.balance("a-6")).as("its own transaction committed").isEqualTo(1);
        assertThat(output.getAll()).doesNotContain("was called inside a transaction its caller began");
    }

    @Test
    void warnsWhenTheTransactionAdvisorWouldRunOutsideTheLock(CapturedOutput output) {
        ApplicationContextRunner runner = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, TransactionAutoConfiguration.class,
                        DynamoLockAutoConfiguration.class))
                .withPropertyValues(DynamoDbLocalProperties.of(LOCK_TABLE, "orders.wait=5s"))
                .withBean(JdbcTransactionManager.class, () -> new JdbcTransactionManager(new EmbeddedDatabaseBuilder()
                        .setType(EmbeddedDatabaseType.H2).generateUniqueName(true).build()))
                .withUserConfiguration(QueueLockedValidationTests.Valid.class);
        runner.run(context -> assertThat(context).hasNotFailed());
        assertThat(output).doesNotContain("The @Transactional advisor has order");
        runner.withPropertyValues("dynamolock.advisor-order=" + Ordered.LOWEST_PRECEDENCE)
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).contains("The @Transactional advisor has order 2147483647 and the @QueueLocked advisor"
                + " 2147483647: where both apply, the lock is taken inside the transaction and released before it"
                + " commits");
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
