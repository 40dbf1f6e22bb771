package io.dynamolock.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dynamolock.autoconfigure.DynamoDbLocalProperties;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockListener;
import io.dynamolock.core.LockLostException;
import io.dynamolock.core.LockQueueFullException;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.QueueSnapshot;
import io.dynamolock.core.test.Await;
import io.dynamolock.core.test.LockFixture;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.integration.support.locks.DistributedLock;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The registry's guarantees and {@link Lock} rules on DynamoDB Local. Two registries on two
 * templates, each with a client of its own, stand for two processes.
 */
class DynamoLockRegistryTests {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final LockFixture fixture = new LockFixture();
    private final Semaphore lostLeases = new Semaphore(0);
    private final LockTemplate templateA = fixture.template(builder -> builder.listener(new LockListener() {
        @Override
        public void onLost(LockHandle lock) {
            lostLeases.release();
        }
    }));
    private final DynamoLockRegistry processA = new DynamoLockRegistry(templateA);
    private final DynamoLockRegistry processB = new DynamoLockRegistry(fixture.template());
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void close() throws Exception {
        threads.shutdownNow();
        fixture.close();
    }

    /**
     * A thread that holds a key through its scope (@QueueLocked, LockTemplate.execute) and asks the registry for the
     * same key would wait for itself for ever: it is told so at once, as {@link Lock#lock()} allows. A tryLock
     * without waiting just says no.
     */
    @Test
    void aThreadThatHoldsTheKeyThroughItsScopeIsRefusedInsteadOfWaitingForItself() throws Exception {
        Lock registryLock = processA.obtain("self-1");
        Future<String> inScope = threads.submit(() -> templateA.execute("self-1", WAIT, held -> {
            assertThat(registryLock.tryLock()).as("no wait: just no").isFalse();
            try {
                registryLock.lock();
                registryLock.unlock();
                return "locked: waited for itself";
            }
            catch (IllegalStateException refused) {
                return refused.getMessage();
            }
        }));

        assertThat(inScope.get(10, TimeUnit.SECONDS)).contains("entity='self-1'").contains("would wait for itself");
        registryLock.lock(); // outside the scope, once released: as usual
        registryLock.unlock();
    }

    /**
     * Four threads take turns through two registries (processes). In every section another thread of the holder's
     * own process tries the lock too: under contention the threads of a process mostly queue while another process
     * holds, so that case is forced rather than left to chance.
     */
    @Test
    void excludesThreadsOfAllProcesses() throws Exception {
        DynamoLockRegistry[] registries = {processA, processB};
        AtomicInteger turn = new AtomicInteger();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger ownProcessLetIn = new AtomicInteger();
        int[] counter = {0};
        DynamoDbLocalProperties.race(4, 5, () -> {
            DynamoLockRegistry registry = registries[turn.getAndIncrement() % 2];
            registry.executeLocked("counter", () -> {
                if (inside.incrementAndGet() > 1) {
                    overlaps.incrementAndGet();
                }
                int seen = counter[0];
                Future<Boolean> sameProcess = threads.submit(() -> {
                    Lock lock = registry.obtain("counter");
                    boolean got = lock.tryLock();
                    if (got) {
                        lock.unlock();
                    }
                    return got;
                });
                if (sameProcess.get(30, TimeUnit.SECONDS)) {
                    ownProcessLetIn.incrementAndGet();
                }
                counter[0] = seen + 1;
                inside.decrementAndGet();
            });
            return null;
        });
        assertThat(overlaps).hasValue(0);
        assertThat(ownProcessLetIn).as("another thread of the holder's process let in").hasValue(0);
        assertThat(counter[0]).as("no increment lost").isEqualTo(20);
        assertThat(fixture.queue("counter")).isEmpty();
    }

    @Test
    void grantsInArrivalOrderAcrossProcessesAndThreads() throws Exception {
        Lock holder = processA.obtain("fifo");
        holder.lock();
        List<Integer> grants = Collections.synchronizedList(new ArrayList<>());
        List<Future<?>> waiters = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            int arrival = i;
            DynamoLockRegistry registry = i % 2 == 0 ? processB : processA;
            waiters.add(threads.submit(() -> {
                Lock lock = registry.obtain("fifo");
                lock.lockInterruptibly();
                grants.add(arrival);
                lock.unlock();
                return null;
            }));
            // The next caller arrives only once this one is queued.
            fixture.awaitQueueLength("fifo", i + 2);
        }
        holder.unlock();
        for (Future<?> waiter : waiters) {
            waiter.get(30, TimeUnit.SECONDS);
        }
        assertThat(grants).containsExactly(0, 1, 2, 3, 4);
    }

    @Test
    void reentersPerThreadThroughAnyLockObjectOfTheKey() throws Exception {
        Lock lock = processA.obtain("reentry");
        lock.lock();
        assertThat(processA.obtain("reentry").tryLock()).as("another object of the key, same thread").isTrue();
        assertThat(fixture.queue("reentry")).as("one queue entry for both holds").hasSize(1);

        lock.unlock();
        assertThat(processB.obtain("reentry").tryLock()).as("still held once").isFalse();
        assertThat(onOtherThread(() -> processA.obtain("reentry").tryLock()))
                .as("another thread of the same process does not join").isFalse();

        lock.unlock();
        assertThat(fixture.queue("reentry")).isEmpty();
        Lock other = processB.obtain("reentry");
        assertThat(other.tryLock()).isTrue();
        other.unlock();
    }

    @Test
    void unlockByAThreadThatDoesNotHoldTheLockThrows() throws Exception {
        Lock lock = processA.obtain("owned");
        lock.lock();
        assertThat(onOtherThread(() -> {
            try {
                lock.unlock();
                return "unlocked";
            }
            catch (IllegalMonitorStateException ex) {
                return ex.getMessage();
            }
        })).isEqualTo("The current thread does not hold lock 'owned' of namespace 'default' of table '"
                + fixture.table() + "'");
        assertThat(processB.obtain("owned").tryLock()).as("still held").isFalse();
        lock.unlock();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
    }

    /**
     * Only the thread that locked may unlock: if it ends holding the lock (a bug, an Error past its finally), nobody
     * can release it. Its lease is then no longer renewed, so the next waiter gets the lock one lease later, as after
     * a process death, instead of never.
     */
    @Test
    void theLockOfAThreadThatEndedHoldingItPassesOnAfterItsLease() throws Exception {
        endHolding(processA, "orphan");
        assertThatThrownBy(() -> processA.obtain("orphan").unlock()).as("nobody else may unlock it")
                .isInstanceOf(IllegalMonitorStateException.class);
        Lock other = processB.obtain("orphan");
        assertThat(other.tryLock(LockFixture.LEASE.multipliedBy(4).toMillis(), TimeUnit.MILLISECONDS))
                .as("the next waiter, within a few leases").isTrue();
        other.unlock();
    }

    /**
     * Nobody can unlock the hold of a thread that ended holding it, so close() does not wait for it: it would wait its
     * whole timeout at every shutdown after such a bug, for a lock that passes on with its lease anyway.
     */
    @Test
    void closeDoesNotWaitForTheHoldOfAThreadThatEnded() throws Exception {
        DynamoLockRegistry registry = new DynamoLockRegistry(templateA, null, WAIT);
        endHolding(registry, "orphan-close");
        threads.submit(registry::close).get(5, TimeUnit.SECONDS);
    }

    /** The same for a holder that ends while close() waits for it. */
    @Test
    void closeStopsWaitingWhenTheHoldingThreadEnds() throws Exception {
        DynamoLockRegistry registry = new DynamoLockRegistry(templateA, null, WAIT);
        CountDownLatch locked = new CountDownLatch(1);
        CountDownLatch end = new CountDownLatch(1);
        Thread owner = new Thread(() -> {
            registry.obtain("orphan-closing").lock();
            locked.countDown();
            awaitQuietly(end);
        }, "orphan-owner");
        owner.start();
        assertThat(locked.await(30, TimeUnit.SECONDS)).isTrue();
        AtomicReference<Thread> closer = new AtomicReference<>();
        Future<?> closed = threads.submit(() -> {
            closer.set(Thread.currentThread());
            registry.close();
        });
        Await.until(WAIT, "close() waits", () -> closer.get() != null
                && closer.get().getState() == Thread.State.TIMED_WAITING);
        assertThat(closed).as("close() waits for a live holder").isNotDone();

        end.countDown();
        owner.join(30_000);
        closed.get(5, TimeUnit.SECONDS);
    }

    /**
     * The registry keeps what threads hold, not what ended threads held: the claim of a thread that ended holding a
     * lock is dropped when another thread is next granted a lock or gives one up, while a live holder keeps its own.
     */
    @Test
    void forgetsTheHoldOfAThreadThatEndedButNotOfALiveOne() throws Exception {
        CountDownLatch locked = new CountDownLatch(1);
        CountDownLatch unlock = new CountDownLatch(1);
        Future<?> liveHolder = threads.submit(() -> {
            Lock lock = processA.obtain("live-held");
            lock.lock();
            locked.countDown();
            awaitQuietly(unlock);
            lock.unlock(); // throws IllegalMonitorStateException if its claim had been dropped
            return null;
        });
        assertThat(locked.await(30, TimeUnit.SECONDS)).isTrue();
        endHolding(processA, "orphan-forgotten");
        assertThat(processA.claims()).as("the live holder's and the ended thread's").isEqualTo(2);

        Lock lock = processA.obtain("other-key");
        lock.lock();
        lock.unlock();
        assertThat(processA.claims()).as("the live holder's claim only").isEqualTo(1);

        unlock.countDown();
        liveHolder.get(30, TimeUnit.SECONDS);
        assertThat(processA.claims()).isZero();
    }

    /** Starts a thread that locks {@code key} and ends without unlocking it, and waits for its end. */
    private static void endHolding(DynamoLockRegistry registry, String key) throws InterruptedException {
        Thread owner = new Thread(() -> registry.obtain(key).lock(), "orphan-owner");
        owner.start();
        owner.join(30_000);
        assertThat(owner.isAlive()).isFalse();
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void tryLockWithoutWaitFailsWhileAnotherHoldsIt() throws Exception {
        Lock held = processB.obtain("no-wait");
        held.lock();
        Lock lock = processA.obtain("no-wait");
        assertThat(lock.tryLock()).isFalse();
        assertThat(lock.tryLock(0, TimeUnit.SECONDS)).isFalse();
        assertThat(lock.tryLock(-1, TimeUnit.SECONDS)).isFalse();
        assertThat(fixture.queue("no-wait")).as("the attempts left the queue").hasSize(1);

        held.unlock();
        assertThat(lock.tryLock(0, TimeUnit.SECONDS)).isTrue();
        lock.unlock();
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
    }

    /** A full queue (maxQueueLength) has no place to wait in: tryLock answers false at once, lock() throws. */
    @Test
    void tryLockOfAKeyWhoseQueueIsFullIsFalse() throws Exception {
        DynamoLockRegistry small = new DynamoLockRegistry(fixture.template(builder -> builder.maxQueueLength(1)));
        Lock held = processB.obtain("full");
        held.lock();
        try {
            Lock lock = small.obtain("full");
            assertThat(lock.tryLock()).isFalse();
            assertThat(lock.tryLock(30, TimeUnit.SECONDS)).isFalse();
            assertThatThrownBy(lock::lock).isInstanceOf(LockQueueFullException.class);
            assertThat(fixture.queue("full")).as("the attempts left no entry").hasSize(1);
        }
        finally {
            held.unlock();
            small.close();
        }
    }

    @Test
    void tryLockWaitsInTheQueueAndGivesUpAfterTheWait() throws Exception {
        Lock held = processB.obtain("bounded");
        held.lock();
        Lock lock = processA.obtain("bounded");
        assertThat(lock.tryLock(300, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(fixture.queue("bounded")).as("the waiter left the queue").hasSize(1);

        Future<Boolean> waiter = threads.submit(() -> {
            boolean locked = lock.tryLock(30, TimeUnit.SECONDS);
            lock.unlock();
            return locked;
        });
        fixture.awaitQueueLength("bounded", 2);
        held.unlock();
        assertThat(waiter.get(30, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void lockInterruptiblyLeavesTheQueueWhenInterrupted() throws Exception {
        Lock held = processB.obtain("interruptible");
        held.lock();
        AtomicReference<Thread> waiterThread = new AtomicReference<>();
        Future<String> waiter = threads.submit(() -> {
            waiterThread.set(Thread.currentThread());
            try {
                processA.obtain("interruptible").lockInterruptibly();
                return "locked";
            }
            catch (InterruptedException ex) {
                return "interrupted, status " + Thread.currentThread().isInterrupted();
            }
        });
        fixture.awaitQueueLength("interruptible", 2);
        waiterThread.get().interrupt();
        assertThat(waiter.get(30, TimeUnit.SECONDS)).isEqualTo("interrupted, status false");
        assertThat(fixture.queue("interruptible")).hasSize(1);
        held.unlock();

        Thread.currentThread().interrupt();
        assertThatThrownBy(() -> processA.obtain("interruptible").lockInterruptibly())
                .isInstanceOf(InterruptedException.class);
        assertThat(fixture.queue("interruptible")).as("an interrupted thread does not queue").isEmpty();
    }

    @Test
    void lockKeepsWaitingWhenInterruptedAndRestoresTheInterrupt() throws Exception {
        Lock held = processB.obtain("uninterruptible");
        held.lock();
        AtomicReference<Thread> waiterThread = new AtomicReference<>();
        Future<Boolean> waiter = threads.submit(() -> {
            waiterThread.set(Thread.currentThread());
            Lock lock = processA.obtain("uninterruptible");
            lock.lock();
            boolean interrupted = Thread.currentThread().isInterrupted();
            lock.unlock();
            return interrupted;
        });
        fixture.awaitQueueLength("uninterruptible", 2);
        String firstPlace = fixture.queue("uninterruptible").get(1).entryId();
        waiterThread.get().interrupt();
        Await.until(WAIT, "the interrupted waiter queues again", () -> {
            List<QueueSnapshot.Entry> queue = fixture.queue("uninterruptible");
            return queue.size() == 2 && !queue.get(1).entryId().equals(firstPlace);
        });
        held.unlock();
        assertThat(waiter.get(30, TimeUnit.SECONDS)).as("interrupt status on return").isTrue();
    }

    @Test
    void conditionsAreNotSupported() {
        assertThatThrownBy(() -> processA.obtain("condition").newCondition())
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void lockWithTtlTakesThatLease() throws Exception {
        DistributedLock lock = processA.obtain("ttl");
        lock.lock(Duration.ofSeconds(30));
        assertThat(fixture.queue("ttl")).singleElement().satisfies(entry -> assertThat(entry.leaseExpiresAt())
                .as("the template's lease is 2 s").isAfter(Instant.now().plusSeconds(20)));
        processA.renewLock("ttl", Duration.ofSeconds(30));
        assertThatThrownBy(() -> processA.renewLock("ttl", Duration.ofSeconds(10)))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("taken with a lease of PT30S").hasMessageContaining("lock(ttl)");
        lock.unlock();

        assertThat(lock.tryLock(Duration.ofSeconds(1), Duration.ofSeconds(40))).isTrue();
        assertThat(fixture.queue("ttl").get(0).leaseExpiresAt()).isAfter(Instant.now().plusSeconds(30));
        lock.unlock();
        assertThatIllegalArgumentException().isThrownBy(() -> lock.lock(Duration.ofMillis(100)))
                .withMessageContaining("lease");
    }

    @Test
    void unlockOfALostLockThrowsConcurrentModification() throws Exception {
        Lock lock = processA.obtain("lost");
        lock.lock();
        purgeFirstEntry("lost");
        assertThat(lostLeases.tryAcquire(30, TimeUnit.SECONDS)).isTrue();

        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining("Lock 'lost' of namespace 'default'").hasMessageContaining("was lost");
        assertThat(lock.tryLock()).as("unlocked all the same").isTrue();
        lock.unlock();
    }

    @Test
    void reentryIntoALostLockFailsAndGivesTheHoldUp() throws Exception {
        Lock lock = processA.obtain("lost-reentry");
        lock.lock();
        purgeFirstEntry("lost-reentry");
        assertThat(lostLeases.tryAcquire(30, TimeUnit.SECONDS)).isTrue();

        assertThat(lock.tryLock()).isFalse();
        assertThatThrownBy(lock::unlock).as("the hold was given up").isInstanceOf(IllegalMonitorStateException.class);
        assertThat(lock.tryLock()).as("the next attempt queues afresh").isTrue();
        lock.unlock();

        lock.lock();
        purgeFirstEntry("lost-reentry");
        assertThat(lostLeases.tryAcquire(30, TimeUnit.SECONDS)).isTrue();
        assertThatThrownBy(lock::lock).isInstanceOf(LockLostException.class)
                .hasMessageContaining("lock again to queue afresh");
        lock.lock();
        lock.unlock();
    }

    @Test
    void renewLockChecksThatTheThreadHoldsAValidLease() throws Exception {
        assertThatThrownBy(() -> processA.renewLock("renew")).isInstanceOf(IllegalMonitorStateException.class);
        Lock lock = processA.obtain("renew");
        lock.lock();
        processA.renewLock("renew");
        processA.renewLock("renew", LockFixture.LEASE);
        assertThat(onOtherThread(() -> {
            try {
                processA.renewLock("renew");
                return "renewed";
            }
            catch (IllegalMonitorStateException ex) {
                return "not the holder";
            }
        })).isEqualTo("not the holder");

        purgeFirstEntry("renew");
        assertThat(lostLeases.tryAcquire(30, TimeUnit.SECONDS)).isTrue();
        assertThatThrownBy(() -> processA.renewLock("renew")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Could not renew lock 'renew'");
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
    }

    @Test
    void executeLockedWithAWaitTimesOutWhileAnotherHoldsTheLock() throws Exception {
        Lock held = processB.obtain("execute");
        held.lock();
        assertThatThrownBy(() -> processA.executeLocked("execute", Duration.ofMillis(200), () -> { }))
                .isInstanceOf(TimeoutException.class);
        held.unlock();
        assertThat(processA.executeLocked("execute", Duration.ofSeconds(5), () -> {
            assertThat(processB.obtain("execute").tryLock()).isFalse();
            return "done";
        })).isEqualTo("done");
    }

    @Test
    void expiringUnusedLocksForgetsNoHeldLock() throws Exception {
        Lock lock = processA.obtain("expire");
        lock.lock();
        processA.expireUnusedOlderThan(0);
        Lock again = processA.obtain("expire");
        assertThat(again.tryLock()).as("re-entry, not a second entry queued behind the first").isTrue();
        again.unlock();
        lock.unlock();
        assertThat(fixture.queue("expire")).isEmpty();
    }

    @Test
    void rejectsKeysThatAreNotStrings() {
        assertThatIllegalArgumentException().isThrownBy(() -> processA.obtain(42L))
                .withMessage("lockKey must be a String (the locked entity), not java.lang.Long '42'; pass"
                        + " String.valueOf(key)");
        assertThatIllegalArgumentException().isThrownBy(() -> processA.obtain(null))
                .withMessageContaining("not null");
        assertThatIllegalArgumentException().isThrownBy(() -> processA.obtain(" ").lock())
                .withMessageContaining("entity ' ' must not be blank");
    }

    @Test
    void locksInItsOwnNamespace() throws Exception {
        DynamoLockRegistry billing = new DynamoLockRegistry(templateA, "billing", Duration.ZERO);
        Lock lock = billing.obtain("order-1");
        lock.lock();
        assertThat(processB.obtain("order-1").tryLock()).as("another namespace, another lock").isTrue();
        processB.obtain("order-1").unlock();
        assertThat(templateA.queue("order-1", "billing").entries()).hasSize(1);
        lock.unlock();
    }

    @Test
    void closeWaitsForHeldLocksToBeUnlockedAndRefusesNewOnes() throws Exception {
        Lock lock = processA.obtain("closing");
        lock.lock();
        CompletableFuture<List<QueueSnapshot.Entry>> closed = new CompletableFuture<>();
        AtomicReference<Thread> closer = new AtomicReference<>();
        threads.submit(() -> {
            closer.set(Thread.currentThread());
            processA.close();
            closed.complete(fixture.queue("closing"));
        });
        Await.until(WAIT, "close() waits", () -> closer.get() != null
                && closer.get().getState() == Thread.State.TIMED_WAITING);
        assertThat(closed).isNotDone();
        assertThatThrownBy(() -> processA.obtain("other").tryLock()).isInstanceOf(IllegalStateException.class)
                .hasMessage(processA + " is closed; it takes no new locks");

        lock.unlock();
        assertThat(closed.get(30, TimeUnit.SECONDS)).as("the queue when close() returned").isEmpty();
    }

    /**
     * The converse of the test above: a thread that holds the key through the registry and enters a scope on the same
     * key (@QueueLocked, LockTemplate.execute) would queue behind its own registry hold, which only it may unlock.
     */
    @Test
    void aThreadThatHoldsTheKeyThroughTheRegistryIsRefusedByAScopeInsteadOfWaitingForItself() throws Exception {
        Future<String> thread = threads.submit(() -> {
            Lock lock = processA.obtain("self-2");
            lock.lock();
            try {
                return templateA.execute(LockRequest.builder("self-2").wait(LockRequest.WAIT_FOREVER).build(),
                        held -> "waited for itself and got in");
            }
            catch (IllegalStateException refused) {
                return refused.getMessage();
            }
            finally {
                lock.unlock();
            }
        });
        assertThat(thread.get(30, TimeUnit.SECONDS)).contains("entity='self-2'").contains("wait for itself");
        assertThat(fixture.queue("self-2")).isEmpty();
    }

    /**
     * Broken (or purged) behind the holder's back, and held by another process meanwhile, before any heartbeat of the
     * holder could tell it: the release's removal finds the entry gone, and unlock() says so. A long lease keeps
     * every heartbeat out of the test.
     */
    @Test
    void unlockAfterTheEntryWasBrokenAndAnotherHeldItThrowsConcurrentModification() throws Exception {
        LockTemplate slowHeartbeats = fixture.template(b -> b.leaseDuration(Duration.ofSeconds(60))
                .heartbeatInterval(Duration.ofSeconds(30)));
        Lock lock = new DynamoLockRegistry(slowHeartbeats).obtain("broken");
        lock.lock();
        fixture.template().breakLock("broken", null, fixture.queue("broken").get(0).ticket());
        Lock other = processB.obtain("broken");
        assertThat(other.tryLock()).isTrue();
        other.unlock();

        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining("broke it");
        assertThat(fixture.queue("broken")).isEmpty();
    }

    @Test
    void aThreadStillWaitingWhenTheRegistryClosesIsRefusedAndHandsTheLockOn() throws Exception {
        Lock held = processB.obtain("closing-wait");
        held.lock();
        Future<String> waiter = threads.submit(() -> {
            Lock lock = processA.obtain("closing-wait");
            try {
                lock.lock();
            }
            catch (IllegalStateException refused) {
                return refused.getMessage();
            }
            lock.unlock();
            return "granted after close";
        });
        fixture.awaitQueueLength("closing-wait", 2);
        processA.close(); // nothing held here: returns at once
        held.unlock();
        assertThat(waiter.get(30, TimeUnit.SECONDS)).contains("was closed while this thread waited for 'closing-wait'");
        Await.until(WAIT, "the lock handed on", () -> fixture.queue("closing-wait").isEmpty());
    }

    /** A close timeout as long as the library's own "as long as it takes" waits for the lock instead of overflowing. */
    @Test
    void closeWithTheLongestTimeoutWaitsForHeldLocks() throws Exception {
        DynamoLockRegistry patient = new DynamoLockRegistry(templateA, null, LockRequest.WAIT_FOREVER);
        Lock lock = patient.obtain("close-forever");
        lock.lock();
        AtomicReference<Thread> closer = new AtomicReference<>();
        Future<?> closed = threads.submit(() -> {
            closer.set(Thread.currentThread());
            patient.close();
        });
        Await.until(WAIT, "close() waits or ends", () -> closed.isDone() || closer.get() != null
                && closer.get().getState() == Thread.State.TIMED_WAITING);
        assertThat(closed).as("close() still waits for the held lock").isNotDone();

        lock.unlock();
        closed.get(30, TimeUnit.SECONDS);
        assertThat(fixture.queue("close-forever")).isEmpty();
    }

    @Test
    void closeGivesUpWaitingAfterItsTimeout() {
        DynamoLockRegistry registry = new DynamoLockRegistry(templateA, null, Duration.ZERO);
        Lock lock = registry.obtain("close-timeout");
        lock.lock();
        registry.close();
        assertThat(fixture.queue("close-timeout")).as("still held").hasSize(1);
        lock.unlock();
        assertThat(fixture.queue("close-timeout")).isEmpty();
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new DynamoLockRegistry(templateA, null, Duration.ofSeconds(-1)))
                .withMessageContaining("closeTimeout PT-1S is negative");
    }

    /** Removes the holder's entry, as another process does after judging it expired. */
    private void purgeFirstEntry(String entity) {
        String id = fixture.queue(entity).get(0).entryId();
        fixture.admin().updateItem(b -> b.tableName(fixture.table())
                .key(Map.of("pk", AttributeValue.fromS(entity), "sk", AttributeValue.fromS("default")))
                .updateExpression("REMOVE #t, #e, #o")
                .expressionAttributeNames(Map.of("#t", "t#" + id, "#e", "e#" + id, "#o", "o#" + id)));
    }

    private <T> T onOtherThread(java.util.concurrent.Callable<T> work) throws Exception {
        return threads.submit(work).get(30, TimeUnit.SECONDS);
    }
}
