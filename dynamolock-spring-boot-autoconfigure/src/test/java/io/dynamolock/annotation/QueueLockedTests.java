package io.dynamolock.annotation;

import static io.dynamolock.autoconfigure.DynamoDbLocalProperties.race;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.dynamolock.annotation.app.CounterService;
import io.dynamolock.annotation.app.Inventory;
import io.dynamolock.annotation.app.LockUser;
import io.dynamolock.annotation.app.LockedService;
import io.dynamolock.annotation.app.NestedService;
import io.dynamolock.annotation.app.Order;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockInfo;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.LockWaitTimeoutException;
import java.io.IOException;
import java.lang.reflect.UndeclaredThrowableException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import kotlinx.coroutines.Job;
import kotlinx.coroutines.JobKt;
import kotlinx.coroutines.flow.Flow;
import kotlinx.coroutines.flow.FlowKt;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.ResponseEntity;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

class QueueLockedTests extends QueueLockedTestSupport {

    @Autowired
    LockedService service;

    @Autowired
    NestedService nested;

    @Autowired
    Inventory inventory;

    @Autowired
    CounterService counter;

    @Autowired
    LockTemplate locks;

    @Autowired
    LockUser lockUser;

    @Test
    void eightThreadsLoseNoUpdateOfOneItem() throws Exception {
        int threads = 8;
        int incrementsPerThread = 10;
        race(threads, incrementsPerThread, () -> {
            counter.increment("shared");
            return null;
        });
        assertThat(counter.get("shared")).isEqualTo(threads * incrementsPerThread);
    }

    @Test
    void evaluatesNestedPropertiesOfParameters() {
        List<LockInfo> held = service.place(new Order("o-1", new Order.Customer("c-9")), 3);
        assertThat(held).singleElement().satisfies(lock -> {
            assertThat(lock.entity()).isEqualTo("c-9/o-1");
            assertThat(lock.namespace()).isEqualTo("orders");
        });
        assertThat(locks.activeLocks()).isEmpty();
    }

    @Test
    void failClosedMethodHoldsAFailClosedEntry() {
        assertThat(service.failClosed("fail-closed-1")).singleElement()
                .satisfies(entry -> assertThat(entry.failClosed()).isTrue());
        assertThat(locks.queue("fail-closed-1", null).entries()).isEmpty();
    }

    @Test
    void evaluatesSeveralParametersPositionsAndRootArgs() {
        assertThat(service.ship("eu", 7, "dhl")).singleElement()
                .satisfies(lock -> assertThat(lock.entity()).isEqualTo("eu:7:dhl"));
    }

    @Test
    void evaluatesBeanReferences() {
        assertThat(service.reserve("ABC")).singleElement()
                .satisfies(lock -> assertThat(lock.entity()).isEqualTo("sku-abc"));
    }

    @Test
    void usesDefaultNamespaceWhenNoneIsGiven() {
        assertThat(service.ship("us", 1, "ups")).singleElement()
                .satisfies(lock -> assertThat(lock.namespace()).isEqualTo(locks.defaultNamespace()));
    }

    @Test
    void resolvesPlaceholdersInNamespaceAndWait() throws Exception {
        assertThat(service.placeholders("ph-1")).singleElement()
                .satisfies(lock -> assertThat(lock.namespace()).isEqualTo("from-placeholder"));
        int calls = service.calls();
        // test.lock.wait=250ms: a held lock makes the call time out instead of waiting the default 10s.
        whileHeldElsewhere(LockRequest.builder("ph-1").namespace("from-placeholder").build(),
                () -> assertThatExceptionOfType(LockWaitTimeoutException.class)
                        .isThrownBy(() -> service.placeholders("ph-1"))
                        .satisfies(ex -> assertThat(ex.namespace()).isEqualTo("from-placeholder")));
        assertThat(service.calls()).isEqualTo(calls);
    }

    @Test
    void worksAsMetaAnnotation() {
        assertThat(service.meta("42")).singleElement().satisfies(lock -> {
            assertThat(lock.entity()).isEqualTo("order-42");
            assertThat(lock.namespace()).isEqualTo("meta");
        });
    }

    @Test
    void worksOnInterfaceMethods() {
        assertThat(inventory.count("x1")).singleElement()
                .satisfies(lock -> assertThat(lock.entity()).isEqualTo("stock-x1"));
    }

    @Test
    void noWaitFailsAtOnceWhenHeldAndRunsWhenFree() throws Exception {
        assertThat(service.noWait("nw-1")).hasSize(1);
        int calls = service.calls();
        whileHeldElsewhere(LockRequest.of("nw-1"), () -> assertThatExceptionOfType(LockWaitTimeoutException.class)
                .isThrownBy(() -> service.noWait("nw-1"))
                .satisfies(ex -> assertThat(ex.position()).isEqualTo(1)));
        assertThat(service.calls()).isEqualTo(calls);
        assertThat(service.noWait("nw-1")).hasSize(1);
    }

    @Test
    void timesOutAfterMaxWaitWithoutRunningTheMethod() throws Exception {
        int calls = service.calls();
        whileHeldElsewhere(LockRequest.of("tw-1"), () -> assertThatExceptionOfType(LockWaitTimeoutException.class)
                .isThrownBy(() -> service.shortWait("tw-1"))
                .satisfies(ex -> {
                    assertThat(ex.entity()).isEqualTo("tw-1");
                    assertThat(ex.namespace()).isEqualTo("default");
                    assertThat(ex.waited()).isGreaterThanOrEqualTo(Duration.ofMillis(300));
                }));
        assertThat(service.calls()).isEqualTo(calls);
    }

    @Test
    void releasesWhenTheMethodThrows() {
        assertThatIllegalStateException().isThrownBy(() -> service.fail("boom-1"))
                .withMessage("failed under the lock");
        assertThat(locks.activeLocks()).isEmpty();
        assertThat(service.noWait("boom-1")).hasSize(1);
    }

    @Test
    void nullOrBlankEntityFailsWithoutLockingOrRunning() {
        int calls = service.calls();
        assertThatIllegalArgumentException().isThrownBy(() -> service.anyEntity(null))
                .withMessageContaining("@QueueLocked entity expression '#id' of " + LockedService.class.getName()
                        + ".anyEntity(String) evaluated to null")
                .withMessageContaining("No lock was taken");
        assertThatIllegalArgumentException().isThrownBy(() -> service.anyEntity("  "))
                .withMessageContaining("evaluated to '  '");
        assertThat(service.calls()).isEqualTo(calls);
        assertThat(locks.activeLocks()).isEmpty();
    }

    /** An Optional's own string (Optional[opt-1]) names no entity, and would not exclude a lock of "opt-1". */
    @Test
    void aPresentOptionalEntityLocksItsValue() {
        assertThat(service.optionalEntity(Optional.of("opt-1"))).containsExactly("opt-1");
        assertThat(service.optionalEntity(Optional.of(List.of("opt-2", "opt-3"))))
                .containsExactlyInAnyOrder("opt-2", "opt-3");
        assertThat(locks.activeLocks()).isEmpty();
    }

    /** Optional.empty() is an optional key's null: locking 'Optional.empty' would put every such call in one queue. */
    @Test
    void anEmptyOptionalEntityFailsAsNullDoes() {
        int calls = service.calls();
        assertThatIllegalArgumentException().isThrownBy(() -> service.optionalEntity(Optional.empty()))
                .withMessageContaining("@QueueLocked entity expression '#id' of " + LockedService.class.getName()
                        + ".optionalEntity(Optional) evaluated to an empty Optional; a lock needs a non-blank entity")
                .withMessageContaining("No lock was taken");
        assertThatIllegalArgumentException().isThrownBy(() -> service.anyKey(List.of("opt-4", Optional.empty())))
                .withMessageContaining("yielded an empty Optional");
        assertThat(service.calls()).isEqualTo(calls);
        assertThat(locks.activeLocks()).isEmpty();
    }

    /** OptionalInt, OptionalLong and OptionalDouble are optional keys too: OptionalLong[5] would not exclude "5". */
    @Test
    void aPrimitiveOptionalEntityLocksItsValueAndAnEmptyOneFailsAsNullDoes() {
        assertThat(service.anyKeyHeld(OptionalInt.of(3))).containsExactly("3");
        assertThat(service.anyKeyHeld(OptionalLong.of(5))).containsExactly("5");
        assertThat(service.anyKeyHeld(OptionalDouble.of(2.5))).containsExactly("2.5");
        int calls = service.calls();
        assertThatIllegalArgumentException().isThrownBy(() -> service.anyKeyHeld(OptionalLong.empty()))
                .withMessageContaining("evaluated to an empty OptionalLong; a lock needs a non-blank entity");
        assertThatIllegalArgumentException().isThrownBy(() -> service.anyKeyHeld(List.of("opt-5",
                OptionalInt.empty()))).withMessageContaining("yielded an empty OptionalInt");
        assertThat(service.calls()).isEqualTo(calls);
        assertThat(locks.activeLocks()).isEmpty();
    }

    /** Object's toString() is an identity hash: the lock would be shared with no other call, in no other JVM. */
    @Test
    void entityWithoutAToStringOfItsOwnFailsWithoutLockingOrRunning() {
        int calls = service.calls();
        Object key = new Object();
        assertThatIllegalArgumentException().isThrownBy(() -> service.anyKey(key))
                .withMessageContaining("@QueueLocked entity expression '#key' of " + LockedService.class.getName()
                        + ".anyKey(Object) evaluated to a java.lang.Object ('" + key + "'), whose toString() is"
                        + " Object's: an identity hash")
                .withMessageContaining("No lock was taken");
        assertThatIllegalArgumentException().isThrownBy(() -> service.anyKey(List.of("a", new int[] {1})))
                .withMessageContaining("yielded a int[]");
        assertThat(service.calls()).isEqualTo(calls);
        assertThat(locks.activeLocks()).isEmpty();
        service.anyKey(List.of("a", 7L)); // values with a toString() of their own lock as ever
        assertThat(service.calls()).isEqualTo(calls + 1);
    }

    @Test
    void entityThatCannotBeEvaluatedFailsWithoutLockingOrRunning() {
        assertThatIllegalArgumentException().isThrownBy(() -> service.place(new Order("o-2", null), 1))
                .withMessageContaining("@QueueLocked entity expression '#order.customer.id + '/' + #order.id' of "
                        + LockedService.class.getName() + ".place(Order, int) could not be evaluated")
                .withMessageContaining("No lock was taken");
        assertThat(locks.activeLocks()).isEmpty();
    }

    @Test
    void nestedMethodOfSameThreadJoinsTheHeldLock() {
        // inner() has maxWait=0: it would fail at once if it queued behind its caller.
        assertThat(service.outer("re-1")).singleElement()
                .satisfies(lock -> assertThat(lock.entity()).isEqualTo("re-1"));
        assertThat(locks.activeLocks()).isEmpty();
    }

    @Test
    void methodCalledUnderLockTemplateJoinsTheHeldLock() {
        List<LockInfo> held = locks.execute("re-2", Duration.ZERO, lock -> nested.inner("re-2"));
        assertThat(held).singleElement().satisfies(lock -> assertThat(lock.entity()).isEqualTo("re-2"));
    }

    @Test
    void holdsTheLockUntilTheFutureCompletes() throws Exception {
        CompletableFuture<String> gate = new CompletableFuture<>();
        CompletableFuture<String> result = service.async("cf-1", gate);
        assertThat(result).isNotDone();
        assertThat(heldEntities()).contains("cf-1");
        // The calling thread does not own the lock: it queues like anyone else.
        assertThat(locks.tryAcquire("cf-1")).isEmpty();
        assertThat(onOtherThread(() -> locks.tryAcquire("cf-1"))).isEmpty();
        gate.complete("done");
        assertThat(result.get(10, TimeUnit.SECONDS)).isEqualTo("done!");
        assertThat(heldEntities()).doesNotContain("cf-1");
        assertThat(onOtherThread(() -> locks.tryAcquire("cf-1").map(lock -> {
            lock.release();
            return true;
        }))).contains(true);
    }

    @Test
    void aLaterCallOfTheThreadQueuesBehindALockAPendingFutureJoined() throws Exception {
        CompletableFuture<String> gate = new CompletableFuture<>();
        CompletableFuture<String> pending = service.syncStartsAsync("cf-6", gate).future();
        assertThat(pending).isNotDone();
        assertThat(heldEntities()).contains("cf-6");
        // maxWait=0: joining would run a second critical section beside the future's
        assertThatThrownBy(() -> service.noWait("cf-6")).isInstanceOf(LockWaitTimeoutException.class);
        gate.complete("done");
        assertThat(pending.get(10, TimeUnit.SECONDS)).isEqualTo("done");
        assertThat(heldEntities()).doesNotContain("cf-6");
    }

    @Test
    void releasesWhenTheFutureFails() throws Exception {
        CompletableFuture<String> gate = new CompletableFuture<>();
        CompletableFuture<String> result = service.async("cf-2", gate);
        gate.completeExceptionally(new IllegalStateException("async failure"));
        assertThat(result).failsWithin(Duration.ofSeconds(10)).withThrowableThat()
                .havingRootCause().withMessage("async failure");
        assertThat(heldEntities()).doesNotContain("cf-2");
    }

    @Test
    void releasesAtOnceWhenTheMethodReturnsNoFuture() {
        assertThat(service.asyncNull("cf-3")).isNull();
        assertThat(heldEntities()).doesNotContain("cf-3");
    }

    /** A return type of Object tells nothing at the start: the future the call returns is followed all the same. */
    @Test
    void holdsTheLockUntilAFutureReturnedThroughObjectCompletes() throws Exception {
        CompletableFuture<String> gate = new CompletableFuture<>();
        CompletableFuture<?> result = (CompletableFuture<?>) service.untyped("cf-7", gate);
        assertThat(result).isNotDone();
        assertThat(heldEntities()).contains("cf-7");
        gate.complete("done");
        assertThat(result.get(10, TimeUnit.SECONDS)).isEqualTo("done");
        assertThat(heldEntities()).doesNotContain("cf-7");
        CompletableFuture<String> done = CompletableFuture.completedFuture("done");
        assertThat(service.untyped("cf-7", done)).isSameAs(done); // a value like any other
    }

    /**
     * A minimal stage (CompletableFuture.minimalCompletionStage(), whose isDone() throws) returned through Object is
     * followed as a CompletableFuture is, and the caller gets a minimal stage back, completing after the release.
     */
    @Test
    void holdsTheLockUntilAMinimalStageReturnedThroughObjectCompletes() throws Exception {
        CompletableFuture<String> gate = new CompletableFuture<>();
        CompletionStage<String> minimal = gate.minimalCompletionStage();
        Object result = service.untyped("cf-9", minimal);
        assertThat(result).isInstanceOf(minimal.getClass());
        assertThat(heldEntities()).contains("cf-9");
        gate.complete("done");
        assertThat(((CompletionStage<?>) result).toCompletableFuture().get(10, TimeUnit.SECONDS)).isEqualTo("done");
        assertThat(heldEntities()).doesNotContain("cf-9");
        CompletionStage<String> done = CompletableFuture.completedStage("done");
        assertThat(service.untyped("cf-9", done)).isSameAs(done); // a value like any other
        assertThat(heldEntities()).doesNotContain("cf-9");
    }

    /** Whatever fails once the method returned, the lock is released: no path leaves it held and renewed. */
    @Test
    void releasesTheLockWhenLookingAtTheReturnedValueFails() {
        FutureTask<String> unaskable = new FutureTask<>(() -> "x") {
            @Override
            public boolean isDone() {
                throw new IllegalStateException("isDone failed");
            }
        };
        assertThatIllegalStateException().isThrownBy(() -> service.untyped("cf-10", unaskable))
                .withMessage("isDone failed");
        assertThat(heldEntities()).doesNotContain("cf-10");
    }

    /** A checked exception thrown where the compiler does not see it (Kotlin, a sneaky throw) releases it too. */
    @Test
    void releasesTheLockWhenLookingAtTheReturnedValueThrowsACheckedException() {
        FutureTask<String> unaskable = new FutureTask<>(() -> "x") {
            @Override
            public boolean isDone() {
                return QueueLockedTests.<RuntimeException>sneakyThrow(new IOException("isDone failed"));
            }
        };
        Throwable failure = catchThrowable(() -> service.untyped("cf-12", unaskable));
        assertThat(failure instanceof UndeclaredThrowableException undeclared ? undeclared.getUndeclaredThrowable()
                : failure).isInstanceOf(IOException.class).hasMessage("isDone failed");
        assertThat(heldEntities()).doesNotContain("cf-12");
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> boolean sneakyThrow(Throwable checked) throws T {
        throw (T) checked;
    }

    /**
     * A subclass of CompletableFuture (Lettuce's RedisFuture, say) returned through Object is refused: the caller may
     * expect its class, and a lock released on its completion could not delay the caller's view of it.
     */
    @Test
    void failsOnACompletableFutureSubclassReturnedThroughObject() {
        CompletableFuture<String> subclass = new CompletableFuture<>() {
        };
        assertThatIllegalStateException().isThrownBy(() -> service.untyped("cf-11", subclass))
                .withMessageContaining("returned a " + subclass.getClass().getName());
        assertThat(heldEntities()).doesNotContain("cf-11");
    }

    @Test
    void holdsTheLockUntilAFutureReturnedThroughATypeVariableCompletes() throws Exception {
        CompletableFuture<String> gate = new CompletableFuture<>();
        CompletableFuture<String> result = service.supplied("cf-8", () -> gate);
        assertThat(heldEntities()).contains("cf-8");
        gate.complete("done");
        assertThat(result.get(10, TimeUnit.SECONDS)).isEqualTo("done");
        assertThat(heldEntities()).doesNotContain("cf-8");
    }

    /**
     * Late work returned through Object that the lock cannot follow would run after the release: the call fails,
     * the lock released, and the publisher is never subscribed.
     */
    @Test
    void failsOnLateWorkReturnedThroughObjectThatTheLockCannotFollow() {
        int calls = service.calls();
        AtomicBoolean subscribed = new AtomicBoolean();
        Mono<String> mono = Mono.just("x").doOnSubscribe(subscription -> subscribed.set(true));
        assertThatIllegalStateException().isThrownBy(() -> service.untyped("late-1", mono))
                .withMessageContaining(LockedService.class.getName() + ".untyped(String, Object) returned a "
                        + mono.getClass().getName() + " through its return type java.lang.Object")
                .withMessageContaining("Declare the return type as Mono or Flux so the lock follows it");
        assertThat(subscribed).isFalse();
        assertThatIllegalStateException().isThrownBy(() -> service.untyped("late-1", new FutureTask<>(() -> "x")))
                .withMessageContaining("returned a java.util.concurrent.FutureTask")
                .withMessageContaining("Declare the return type as CompletableFuture or CompletionStage");
        Flow<String> flow = FlowKt.emptyFlow();
        assertThatIllegalStateException().isThrownBy(() -> service.supplied("late-1", () -> flow))
                .withMessageContaining("returned a " + flow.getClass().getName() + " through its return type T")
                .withMessageContaining("Declare the return type as Flow");
        assertThat(service.calls()).isEqualTo(calls + 3);
        assertThat(heldEntities()).doesNotContain("late-1");
    }

    /**
     * Spring MVC and WebFlux stream a ResponseEntity's body after the method returned: late work in the body of one
     * returned through Object fails the call, the lock released and the body never subscribed, as the start refuses
     * a declared ResponseEntity of it. A body already done is a value.
     */
    @Test
    void failsOnLateWorkInTheBodyOfAResponseEntityReturnedThroughObject() {
        int calls = service.calls();
        AtomicBoolean subscribed = new AtomicBoolean();
        Flux<String> flux = Flux.just("x").doOnSubscribe(subscription -> subscribed.set(true));
        assertThatIllegalStateException().isThrownBy(() -> service.untyped("body-1", ResponseEntity.ok(flux)))
                .withMessageContaining(LockedService.class.getName() + ".untyped(String, Object) returned a "
                        + ResponseEntity.class.getName() + " whose body is a " + flux.getClass().getName()
                        + " through its return type java.lang.Object")
                .withMessageContaining("streamed after the method returned");
        assertThat(subscribed).isFalse();
        assertThat(service.calls()).isEqualTo(calls + 1);
        assertThat(heldEntities()).doesNotContain("body-1");
        ResponseEntity<CompletableFuture<String>> done = ResponseEntity.ok(CompletableFuture.completedFuture("x"));
        assertThat(service.untyped("body-2", done)).isSameAs(done);
    }

    /**
     * A future followed until it completes, its value a ResponseEntity whose body is late work: Spring would stream
     * the body after the release, so the caller's future fails, the body never subscribed.
     */
    @Test
    void failsAFollowedFutureWhoseResponseEntityHasLateWorkInItsBody() throws Exception {
        CompletableFuture<Object> gate = new CompletableFuture<>();
        CompletableFuture<?> result = (CompletableFuture<?>) service.untyped("body-3", gate);
        AtomicBoolean subscribed = new AtomicBoolean();
        Flux<String> flux = Flux.just("x").doOnSubscribe(subscription -> subscribed.set(true));
        gate.complete(ResponseEntity.ok(flux));
        assertThat(catchThrowable(() -> result.get(10, TimeUnit.SECONDS))).cause()
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("whose body is a " + flux.getClass().getName());
        assertThat(subscribed).isFalse();
        assertThat(heldEntities()).doesNotContain("body-3");
    }

    /**
     * A ResponseEntity whose body throws when asked whether it is done (a remote job's handle that lost its
     * connection): the call fails with that exception, the lock released.
     */
    @Test
    void aResponseEntityBodyThatThrowsWhenInspectedFailsTheCallAndReleasesTheLock() {
        assertThatIllegalStateException()
                .isThrownBy(() -> service.untyped("body-4", ResponseEntity.ok(new DisconnectedFuture())))
                .withMessage(DisconnectedFuture.DISCONNECTED);
        assertThat(heldEntities()).doesNotContain("body-4");
    }

    /**
     * The same body in the ResponseEntity a followed future completes with: the caller's future fails with that
     * exception, the lock released (it was renewed for good, and the caller's future never completed).
     */
    @Test
    void aFollowedFutureWhoseResponseEntityBodyThrowsWhenInspectedFailsAndReleasesTheLock() throws Exception {
        CompletableFuture<Object> gate = new CompletableFuture<>();
        CompletableFuture<?> result = (CompletableFuture<?>) service.untyped("body-5", gate);
        gate.complete(ResponseEntity.ok(new DisconnectedFuture()));
        assertThat(result).failsWithin(Duration.ofSeconds(10)).withThrowableOfType(ExecutionException.class)
                .havingCause().isInstanceOf(IllegalStateException.class).withMessage(DisconnectedFuture.DISCONNECTED);
        assertThat(heldEntities()).doesNotContain("body-5");
    }

    /**
     * A body that throws a checked exception undeclared when inspected (a Kotlin handle's isDone()): the call fails
     * with it, the lock released, as for an unchecked one.
     */
    @Test
    void aResponseEntityBodyThatThrowsACheckedExceptionWhenInspectedFailsTheCallAndReleasesTheLock() {
        Throwable failure = catchThrowable(() -> service.untyped("body-6",
                ResponseEntity.ok(new DisconnectedFuture(() -> new IOException(DisconnectedFuture.DISCONNECTED)))));
        assertThat(failure instanceof UndeclaredThrowableException undeclared ? undeclared.getUndeclaredThrowable()
                : failure).isInstanceOf(IOException.class).hasMessage(DisconnectedFuture.DISCONNECTED);
        assertThat(heldEntities()).doesNotContain("body-6");
    }

    /**
     * The same body in the ResponseEntity a followed future completes with: the caller's future fails with that
     * checked exception, the lock released (only unchecked ones were caught: the lock was renewed for good, and the
     * caller's future never completed).
     */
    @Test
    void aFollowedFutureWhoseResponseEntityBodyThrowsACheckedExceptionWhenInspectedFailsAndReleasesTheLock() {
        CompletableFuture<Object> gate = new CompletableFuture<>();
        CompletableFuture<?> result = (CompletableFuture<?>) service.untyped("body-7", gate);
        gate.complete(ResponseEntity.ok(
                new DisconnectedFuture(() -> new IOException(DisconnectedFuture.DISCONNECTED))));
        assertThat(result).failsWithin(Duration.ofSeconds(10)).withThrowableOfType(ExecutionException.class)
                .havingCause().isInstanceOf(IOException.class).withMessage(DisconnectedFuture.DISCONNECTED);
        assertThat(heldEntities()).doesNotContain("body-7");
    }

    /** A Kotlin Job returned through Object runs after the release, as a Deferred would: the call fails. */
    @Test
    void failsOnAKotlinJobReturnedThroughObject() {
        Job job = JobKt.Job(null);
        assertThatIllegalStateException().isThrownBy(() -> service.untyped("job-1", job))
                .withMessageContaining("returned a " + job.getClass().getName())
                .withMessageContaining("Return no Job: In Kotlin, launch the coroutine inside the method and join it");
        assertThat(heldEntities()).doesNotContain("job-1");
    }

    @Test
    void asynchronousMethodJoinsTheLockOfAnEnclosingSynchronousOne() throws Exception {
        // asyncNoWait() has maxWait=0: it would fail at once if it queued behind its caller.
        assertThat(service.outerThenAsync("cf-4")).singleElement()
                .satisfies(lock -> assertThat(lock.entity()).isEqualTo("cf-4"));
        assertThat(service.asyncThenSync("cf-5")).singleElement()
                .satisfies(lock -> assertThat(lock.entity()).isEqualTo("cf-5"));
        assertThat(locks.activeLocks()).isEmpty();
    }

    @Test
    void synchronousMethodInsideAnAsynchronousOneJoinsItsLock() throws Exception {
        // shortWait() would time out if it queued behind the enclosing method: it runs in that method's scope.
        assertThat(nested.syncInsideAsync("cf-6").get(10, TimeUnit.SECONDS)).singleElement()
                .satisfies(lock -> assertThat(lock.entity()).isEqualTo("cf-6"));
        assertThat(locks.activeLocks()).isEmpty();
    }

    @Test
    void lockTemplateIsInjectedIntoUserBeans() {
        assertThat(lockUser.lockTemplate()).isSameAs(locks);
        long first = lockUser.fencingTokenOf("user-1");
        assertThat(lockUser.fencingTokenOf("user-1")).isGreaterThan(first);
    }

    /** A remote job's handle whose connection is lost: every question about it throws. */
    private static final class DisconnectedFuture implements Future<String> {

        static final String DISCONNECTED = "connection to the job server lost";

        /** What each question throws: an IllegalStateException, or a checked exception undeclared (as Kotlin's). */
        private final Supplier<Throwable> lost;

        DisconnectedFuture() {
            this(() -> new IllegalStateException(DISCONNECTED));
        }

        DisconnectedFuture(Supplier<Throwable> lost) {
            this.lost = lost;
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            return false;
        }

        @Override
        public boolean isCancelled() {
            return sneakyThrow(lost.get());
        }

        @Override
        public boolean isDone() {
            return sneakyThrow(lost.get());
        }

        @Override
        public String get() {
            sneakyThrow(lost.get());
            return null;
        }

        @Override
        public String get(long timeout, TimeUnit unit) {
            sneakyThrow(lost.get());
            return null;
        }
    }

    private List<String> heldEntities() {
        return locks.activeLocks().stream().filter(LockInfo::holding).map(LockInfo::entity).toList();
    }

    /** Runs {@code check} while another thread holds the lock of {@code request}. */
    private void whileHeldElsewhere(LockRequest request, Runnable check) throws Exception {
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch checked = new CountDownLatch(1);
        CompletableFuture<Void> holder = CompletableFuture.runAsync(() -> {
            try (LockHandle lock = locks.acquire(request)) {
                held.countDown();
                checked.await(30, TimeUnit.SECONDS);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        });
        assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
        try {
            check.run();
        }
        finally {
            checked.countDown();
            holder.get(10, TimeUnit.SECONDS);
        }
    }

    private static <T> T onOtherThread(java.util.concurrent.Callable<T> work) throws Exception {
        ExecutorService single = Executors.newSingleThreadExecutor();
        try {
            return single.submit(work).get(10, TimeUnit.SECONDS);
        }
        finally {
            single.shutdownNow();
        }
    }
}
