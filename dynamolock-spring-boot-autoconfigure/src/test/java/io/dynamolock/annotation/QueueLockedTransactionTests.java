package io.dynamolock.annotation;

import static io.dynamolock.autoconfigure.DynamoDbLocalProperties.race;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import io.dynamolock.annotation.app.AccountService;
import io.dynamolock.annotation.app.LockTestApplication.AcquireProbe;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockLostException;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.test.Await;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
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
     * The usual layering: a service's transaction calls the locked method, whose own @Transactional joins it. The lock
     * is held until that transaction commits: released at the method's return, the second deposit would read the
     * balance before the first one's commit, and one deposit would be lost.
     */
    @Test
    void aLockTakenInsideTheCallersTransactionIsHeldUntilItCommits() throws Exception {
        accounts.open("a-4");
        TransactionTemplate transaction = new TransactionTemplate(transactionManager);
        CountDownLatch firstDeposited = new CountDownLatch(1);
        CountDownLatch secondRead = new CountDownLatch(1);
        AtomicReference<String> firstAtCommit = new AtomicReference<>();
        CompletableFuture<Void> first = CompletableFuture.runAsync(() -> transaction.executeWithoutResult(status -> {
            accounts.deposit("a-4", 1, () -> { });
            firstDeposited.countDown();
            // The rest of the caller's transaction, until the second deposit either queues (the lock is still held)
            // or has read the balance (it was not).
            Await.until(Duration.ofSeconds(30), "the second deposit queued or read",
                    () -> secondRead.getCount() == 0 || locks.queue("account-a-4", null).entries().size() == 2);
            firstAtCommit.set("held=" + locks.activeLocks().stream()
                    .anyMatch(lock -> lock.entity().equals("account-a-4") && lock.holding())
                    + " secondRead=" + (secondRead.getCount() == 0));
        }));
        CompletableFuture<Void> second = CompletableFuture.runAsync(() -> {
            await(firstDeposited);
            transaction.executeWithoutResult(status -> accounts.deposit("a-4", 1, secondRead::countDown));
        });
        first.get(60, TimeUnit.SECONDS);
        second.get(60, TimeUnit.SECONDS);
        assertThat(firstAtCommit).hasValue("held=true secondRead=false");
        assertThat(accounts.balance("a-4")).as("two deposits of 1").isEqualTo(2);
        assertThat(heldAccountLocks()).isZero();
    }

    /** Later calls in the same transaction join the lock it holds instead of queueing behind it. */
    @Test
    void laterCallsInTheCallersTransactionJoinTheLockItHolds() {
        accounts.open("a-5");
        TransactionTemplate transaction = new TransactionTemplate(transactionManager);
        List<Long> tokens = transaction.execute(status -> {
            accounts.deposit("a-5", 1);
            accounts.deposit("a-5", 2);
            return List.of(probe.lastGranted("account-a-5").fencingToken(),
                    locks.queue("account-a-5", null).entries().get(0).ticket(),
                    (long) locks.queue("account-a-5", null).entries().size());
        });
        assertThat(tokens.get(1)).as("the entry in the queue").isEqualTo(tokens.get(0));
        assertThat(tokens.get(2)).as("entries in the queue").isOne();
        assertThat(accounts.balance("a-5")).isEqualTo(3);
        assertThat(heldAccountLocks()).isZero();
    }

    @Test
    void aLockTakenInsideTheCallersTransactionIsReleasedWhenItRollsBack() {
        accounts.open("a-6");
        TransactionTemplate transaction = new TransactionTemplate(transactionManager);
        transaction.executeWithoutResult(status -> {
            accounts.deposit("a-6", 1);
            assertThat(heldAccountLocks()).isOne();
            status.setRollbackOnly();
        });
        assertThat(heldAccountLocks()).isZero();
        assertThat(accounts.balance("a-6")).isZero();
    }

    /** A lease lost after the method returned but before the caller's commit fails the commit (on-lost-lease: fail). */
    @Test
    void aLeaseLostBeforeTheCallersCommitRollsItBack() {
        accounts.open("a-7");
        TransactionTemplate transaction = new TransactionTemplate(transactionManager);
        assertThatExceptionOfType(LockLostException.class).isThrownBy(() -> transaction.executeWithoutResult(status -> {
            accounts.deposit("a-7", 1);
            LockHandle lock = probe.lastGranted("account-a-7");
            locks.breakLock("account-a-7", null, lock.fencingToken());
            Await.until(Duration.ofSeconds(30), "the holder saw its lease lost", () -> !lock.isValid());
        })).withMessageContaining("The lease of lock entity='account-a-7'");
        assertThat(accounts.balance("a-7")).as("rolled back").isZero();
        assertThat(heldAccountLocks()).isZero();
    }

    private static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(30, TimeUnit.SECONDS)).isTrue();
        }
        catch (InterruptedException ex) {
            throw new IllegalStateException(ex);
        }
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
