package io.dynamolock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

import io.dynamolock.autoconfigure.DynamoDbLocalProperties;
import io.dynamolock.autoconfigure.DynamoLockAutoConfiguration;
import io.dynamolock.autoconfigure.DynamoLockReactiveAutoConfiguration;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockListener;
import io.dynamolock.core.LockLostException;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.LockWaitTimeoutException;
import io.dynamolock.core.test.DynamoDbLocal;
import io.dynamolock.reactive.ReactiveLockOperations;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.reactivestreams.Publisher;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.http.ResponseEntity;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * {@code @QueueLocked} on {@code Mono} and {@code Flux}: held from the grant to the end of the publisher, released
 * on completion, error and cancellation, a wait cancelled leaves no entry, and re-entry follows the Reactor
 * {@code Context}.
 */
@ExtendWith(OutputCaptureExtension.class)
class ReactiveQueueLockedTests {

    private static final DynamoDbLocal LOCAL = DynamoDbLocal.shared();

    private static final String TABLE = LOCAL.newLockTable();

    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DynamoLockAutoConfiguration.class,
                    DynamoLockReactiveAutoConfiguration.class))
            .withPropertyValues(DynamoDbLocalProperties.of(TABLE,
                    "dynamolock.lease-duration=5s",
                    "dynamolock.heartbeat-interval=100ms",
                    "dynamolock.poll-interval.min=10ms",
                    "dynamolock.poll-interval.max=50ms"))
            .withBean(LostLeases.class)
            .withBean(Inner.class)
            .withBean(Locked.class);

    /**
     * A ResponseEntity a Mono gives has its body streamed after the Mono completed and released the lock: late work
     * there fails the Mono, the body never subscribed, as the start refuses a declared Mono of a ResponseEntity of it.
     * A body that is a plain value is given on.
     */
    @Test
    void failsOnLateWorkInTheBodyOfAResponseEntityThatAMonoGives() {
        contextRunner.run(context -> {
            Locked locked = context.getBean(Locked.class);
            AtomicBoolean subscribed = new AtomicBoolean();
            Flux<String> body = Flux.just("x").doOnSubscribe(subscription -> subscribed.set(true));
            StepVerifier.create(locked.holdAny("mono-body-1", Mono.just(ResponseEntity.ok(body))))
                    .expectErrorSatisfies(error -> assertThat(error).isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("returned a " + ResponseEntity.class.getName() + " whose body is a "
                                    + body.getClass().getName()))
                    .verify(TIMEOUT);
            assertThat(subscribed).isFalse();
            ResponseEntity<String> plain = ResponseEntity.ok("x");
            assertThat(locked.holdAny("mono-body-2", Mono.just(plain)).block(TIMEOUT)).isSameAs(plain);
        });
    }

    @Test
    void runsOneBodyAtATimeAndLosesNoUpdate() {
        // 40 waiters renewing every 100 ms overload DynamoDB Local; the default ratio is enough here.
        contextRunner.withPropertyValues("dynamolock.heartbeat-interval=2s").run(context -> {
            Locked locked = context.getBean(Locked.class);
            Flux.range(0, 40).flatMap(i -> locked.increment("count-1"), 8).then().block(TIMEOUT);
            assertThat(locked.counter()).isEqualTo(40);
            assertThat(locked.maxInside()).isEqualTo(1);
        });
    }

    @Test
    void holdsTheLockUntilTheLastElementOfAFlux() {
        contextRunner.run(context -> {
            Locked locked = context.getBean(Locked.class);
            Sinks.Many<Integer> body = Sinks.many().unicast().onBackpressureBuffer();
            StepVerifier.create(locked.many("flux-1", body.asFlux()))
                    .then(() -> body.tryEmitNext(1))
                    .expectNext(1)
                    .then(() -> StepVerifier.create(locked.noWait("flux-1"))
                            .expectError(LockWaitTimeoutException.class).verify(TIMEOUT))
                    .then(body::tryEmitComplete)
                    .expectComplete()
                    .verify(TIMEOUT);
            StepVerifier.create(locked.noWait("flux-1")).expectNext("ran").verifyComplete();
        });
    }

    @Test
    void cancellingTheWaitLeavesNoEntryAndTheNextCallerIsGrantedAtOnce() {
        contextRunner.run(context -> {
            Locked locked = context.getBean(Locked.class);
            LockTemplate template = context.getBean(LockTemplate.class);
            Sinks.One<String> first = Sinks.one();
            CountDownLatch holding = new CountDownLatch(1);
            Disposable holder = locked.hold("cancel-wait", first.asMono().doOnSubscribe(s -> holding.countDown()))
                    .subscribe();
            assertThat(holding.await(20, TimeUnit.SECONDS)).isTrue();
            Disposable waiter = locked.hold("cancel-wait", Mono.just("second")).subscribe();
            await().atMost(TIMEOUT).until(() -> template.queue("cancel-wait", null).entries().size() == 2);
            waiter.dispose();
            await().atMost(TIMEOUT).until(() -> template.queue("cancel-wait", null).entries().size() == 1);
            first.tryEmitValue("first");
            await().atMost(TIMEOUT).until(holder::isDisposed);
            await().atMost(TIMEOUT).until(() -> template.queue("cancel-wait", null).entries().isEmpty());
            StepVerifier.create(locked.noWait("cancel-wait")).expectNext("ran").verifyComplete();
        });
    }

    @Test
    void cancellingWhileHoldingReleases() {
        contextRunner.run(context -> {
            Locked locked = context.getBean(Locked.class);
            LockTemplate template = context.getBean(LockTemplate.class);
            Disposable holder = holdUntilDisposed(locked, "cancel-hold");
            StepVerifier.create(locked.noWait("cancel-hold")).expectError(LockWaitTimeoutException.class)
                    .verify(TIMEOUT);
            holder.dispose();
            await().atMost(TIMEOUT).until(() -> template.queue("cancel-hold", null).entries().isEmpty());
            StepVerifier.create(locked.noWait("cancel-hold")).expectNext("ran").verifyComplete();
        });
    }

    @Test
    void releasesOnErrorAndPassesItOn() {
        contextRunner.run(context -> {
            Locked locked = context.getBean(Locked.class);
            StepVerifier.create(locked.hold("error-1", Mono.error(new IllegalStateException("boom"))))
                    .expectErrorMessage("boom").verify(TIMEOUT);
            StepVerifier.create(locked.noWait("error-1")).expectNext("ran").verifyComplete();
        });
    }

    @Test
    void failsTheBodyWhenTheLeaseIsLost() {
        contextRunner.run(context -> {
            Locked locked = context.getBean(Locked.class);
            DynamoDbClient dynamoDb = context.getBean(DynamoDbClient.class);
            CountDownLatch holding = new CountDownLatch(1);
            StepVerifier.create(locked.hold("lost-r1", Mono.<String>never().doOnSubscribe(s -> holding.countDown())))
                    .then(() -> {
                        await().atMost(TIMEOUT).until(() -> holding.getCount() == 0);
                        purge(dynamoDb, "lost-r1");
                    })
                    .expectErrorSatisfies(ex -> assertThat(ex).isInstanceOf(LockLostException.class)
                            .hasMessageContaining("entity='lost-r1'"))
                    .verify(TIMEOUT);
        });
    }

    @Test
    void onlyLogsALostLeaseWhenConfiguredTo() {
        contextRunner.withPropertyValues("dynamolock.on-lost-lease=log").run(context -> {
            Locked locked = context.getBean(Locked.class);
            DynamoDbClient dynamoDb = context.getBean(DynamoDbClient.class);
            LostLeases lostLeases = context.getBean(LostLeases.class);
            Sinks.One<String> body = Sinks.one();
            CountDownLatch holding = new CountDownLatch(1);
            StepVerifier.create(locked.hold("lost-r2", body.asMono().doOnSubscribe(s -> holding.countDown())))
                    .then(() -> {
                        await().atMost(TIMEOUT).until(() -> holding.getCount() == 0);
                        purge(dynamoDb, "lost-r2");
                        await().atMost(TIMEOUT).until(() -> lostLeases.lost.containsKey("lost-r2"));
                        body.tryEmitValue("done");
                    })
                    .expectNext("done").verifyComplete();
        });
    }

    @Test
    void failsOrSkipsWhenTheWaitRunsOut() {
        contextRunner.run(context -> {
            Locked locked = context.getBean(Locked.class);
            Disposable holder = holdUntilDisposed(locked, "busy-1");
            StepVerifier.create(locked.shortWait("busy-1")).expectError(LockWaitTimeoutException.class)
                    .verify(TIMEOUT);
            AtomicBoolean ran = new AtomicBoolean();
            StepVerifier.create(locked.skipWhenBusy("busy-1", ran)).verifyComplete();
            assertThat(ran).isFalse();
            holder.dispose();
        });
    }

    /**
     * A lock that cannot be asked for (the entity null, blank, a value that arrives later, or an expression that
     * throws) fails the publisher, as a reactive caller expects, with the error the call threw before: no lock is
     * taken and the method does not run.
     */
    @Test
    void aLockThatCannotBeAskedForFailsThePublisherWithoutCallingTheMethod() {
        contextRunner.run(context -> {
            Locked locked = context.getBean(Locked.class);
            LockTemplate locks = context.getBean(LockTemplate.class);
            String of = "@QueueLocked entity expression '#key' of " + Locked.class.getName();
            failsAsASignal(() -> locked.monoOf(null), IllegalArgumentException.class,
                    of + ".monoOf(Object) evaluated to null; a lock needs a non-blank entity");
            failsAsASignal(() -> locked.monoOf("  "), IllegalArgumentException.class, "evaluated to '  '");
            failsAsASignal(() -> locked.monoOf(CompletableFuture.completedFuture("order-1")),
                    IllegalArgumentException.class, "evaluated to a java.util.concurrent.CompletableFuture");
            failsAsASignal(() -> locked.fluxOf(null), IllegalArgumentException.class,
                    of + ".fluxOf(Object) evaluated to null");
            failsAsASignal(() -> locked.fluxOf(Mono.just("order-1")), IllegalArgumentException.class,
                    "evaluated to a reactor.core.publisher.MonoJust");
            failsAsASignal(() -> locked.monoOfTail(null), IllegalArgumentException.class,
                    "@QueueLocked entity expression '#key.substring(3)' of " + Locked.class.getName()
                            + ".monoOfTail(String) could not be evaluated");
            // SpEL passes on what a method it calls throws.
            failsAsASignal(() -> locked.fluxOfTail("ab"), StringIndexOutOfBoundsException.class, "begin 3, end 2");
            assertThat(locked.calls()).as("calls of the methods").isZero();
            assertThat(locks.activeLocks()).isEmpty();
        });
    }

    /** The call returns (it used to throw) a publisher that fails with {@code type} and {@code message}. */
    private static void failsAsASignal(Supplier<Publisher<?>> call, Class<? extends Throwable> type, String message) {
        Publisher<?> returned = call.get();
        StepVerifier.create(returned).expectErrorSatisfies(failure -> assertThat(failure).isInstanceOf(type)
                .hasMessageContaining(message)).verify(TIMEOUT);
    }

    /** A signal held back for the minimum hold would take an hour: verify's timeout would end the test first. */
    @Test
    void minHoldKeepsTheLockAfterAShortBodyWithoutHoldingBackItsSignal() {
        contextRunner.run(context -> {
            Locked locked = context.getBean(Locked.class);
            StepVerifier.create(locked.heldAtLeast1h("min-hold-1", Mono.just("done"))).expectNext("done")
                    .expectComplete().verify(TIMEOUT);
            StepVerifier.create(locked.heldAtLeast1h("min-hold-2", Mono.error(new IllegalStateException("boom"))))
                    .expectErrorMessage("boom").verify(TIMEOUT);
            // Both locks are still held after their bodies.
            StepVerifier.create(locked.noWait("min-hold-1")).expectError(LockWaitTimeoutException.class)
                    .verify(TIMEOUT);
            StepVerifier.create(locked.noWait("min-hold-2")).expectError(LockWaitTimeoutException.class)
                    .verify(TIMEOUT);
        });
    }

    @Test
    void aLockKeptForItsMinimumHoldIsReleasedInTheBackgroundOnceItIsOver() {
        contextRunner.run(context -> {
            Locked locked = context.getBean(Locked.class);
            LockTemplate template = context.getBean(LockTemplate.class);
            StepVerifier.create(locked.heldAtLeast1s("min-hold-3", Mono.just("done"))).expectNext("done")
                    .expectComplete().verify(TIMEOUT);
            // With nobody subscribed any more.
            await().atMost(TIMEOUT).until(() -> template.queue("min-hold-3", null).entries().isEmpty());
            StepVerifier.create(locked.noWait("min-hold-3")).expectNext("ran").verifyComplete();
        });
    }

    @Test
    void aNestedCallInTheBodysContextJoinsTheLock() {
        contextRunner.run(context -> {
            Locked locked = context.getBean(Locked.class);
            // Inner.token waits 0: it succeeds only by joining the lock the outer call holds.
            StepVerifier.create(locked.outerThenInner("nested-1"))
                    .assertNext(tokens -> assertThat(tokens[1]).isEqualTo(tokens[0]))
                    .verifyComplete();
            StepVerifier.create(locked.noWait("nested-1")).expectNext("ran").verifyComplete();
        });
    }

    @Test
    void aCallBlockedOnInsideABlockingHoldOfTheLockJoinsItWhenItCarriesTheHold() {
        contextRunner.run(context -> {
            Locked locked = context.getBean(Locked.class);
            // Inner.token waits 0: it succeeds only by joining the lock the blocking outer call holds.
            long[] tokens = locked.blockingOuterThenInner("nested-3", true);
            assertThat(tokens[1]).isEqualTo(tokens[0]);
            StepVerifier.create(locked.noWait("nested-3")).expectNext("ran").verifyComplete();
        });
    }

    @Test
    void aCallBlockedOnInsideABlockingHoldOfTheLockWithoutTheHoldTimesOutSayingHowToCarryIt() {
        contextRunner.run(context -> {
            Locked locked = context.getBean(Locked.class);
            assertThatExceptionOfType(LockWaitTimeoutException.class)
                    .isThrownBy(() -> locked.blockingOuterThenInner("nested-4", false))
                    .withMessageContaining("made on a thread inside a blocking hold of LockHandle[")
                    .withMessageContaining(".contextWrite(ReactiveLockOperations.inScope(locks.currentScope()))")
                    .withMessageContaining("Work that only ran on that thread (a sink's subscriber, a resumed"
                            + " coroutine) must not carry it");
            StepVerifier.create(locked.noWait("nested-4")).expectNext("ran").verifyComplete();
        });
    }

    /** The explanation is added to what the core's time-out said (a silent fail-closed entry ahead, say) and its cause. */
    @Test
    void theExplainedTimeOutKeepsTheCoresHintAndCause() {
        contextRunner.run(context -> {
            LockTemplate locks = context.getBean(LockTemplate.class);
            RuntimeException pollFailure = new IllegalStateException("the last poll failed");
            LockWaitTimeoutException core = new LockWaitTimeoutException("hint-3", "default", Duration.ofSeconds(1),
                    1, List.of("pod-a"), "The fail-closed entry with ticket 7 of pod-a has not been renewed");
            core.initCause(pollFailure);
            locks.execute(LockRequest.builder("hint-3").build(), held -> {
                LockWaitTimeoutException explained = ReactiveQueueLockedInvocation.explained(core,
                        locks.currentScope());
                assertThat(explained.getMessage()).contains("The fail-closed entry with ticket 7 of pod-a")
                        .contains("made on a thread inside a blocking hold of LockHandle[");
                assertThat(explained.getCause()).isSameAs(pollFailure);
                return null;
            });
        });
    }

    /** The thread's hold of the entity in another namespace is not what the call waited for: no hint. */
    @Test
    void theTimeOutDoesNotBlameAHoldOfTheThreadInAnotherNamespace() {
        contextRunner.run(context -> {
            Inner inner = context.getBean(Inner.class);
            LockTemplate locks = context.getBean(LockTemplate.class);
            LockHandle someoneElse = locks.acquire(LockRequest.builder("hint-2").build()); // the default namespace
            try {
                locks.execute(LockRequest.builder("hint-2").namespace("billing").build(), held -> {
                    assertThatExceptionOfType(LockWaitTimeoutException.class)
                            .isThrownBy(() -> inner.token("hint-2").block(TIMEOUT))
                            .withMessageNotContaining("blocking hold");
                    return null;
                });
            }
            finally {
                someoneElse.release();
            }
        });
    }

    /** Skipped for its own caller's hold, which it may be waiting for: not a DEBUG line only. */
    @Test
    void aSkippableCallBlockedOnInsideABlockingHoldOfTheLockIsSkippedWithAWarning(CapturedOutput output) {
        contextRunner.run(context -> {
            Locked locked = context.getBean(Locked.class);
            AtomicBoolean ran = new AtomicBoolean();
            locked.blockingOuterThenSkippable("skip-own", ran);
            assertThat(ran).as("the skipped call's body ran").isFalse();
            assertThat(output).contains("WARN").contains("Skipped ").contains("skipUnlessFree")
                    .contains("If that hold's own code blocked on this call, it waited for itself");
        });
    }

    /**
     * A blocking hold emits to a pipeline subscribed elsewhere (a sink emits on the emitting thread): the pipeline's
     * call of a locked method runs on the holder's thread, inside its callback, but is no part of it. Joining would
     * let its body run beside the holder's callback, or on after it, under the holder's fencing token.
     */
    @Test
    void aPipelineThatABlockingHoldEmitsToDoesNotJoinIt() {
        contextRunner.run(context -> {
            Inner inner = context.getBean(Inner.class);
            LockTemplate locks = context.getBean(LockTemplate.class);
            Sinks.Many<String> events = Sinks.many().unicast().onBackpressureBuffer();
            CompletableFuture<Long> unrelated = events.asFlux().concatMap(inner::patientToken).next().toFuture();
            long holder = locks.execute(LockRequest.builder("emitted").build(), held -> {
                events.tryEmitNext("emitted");
                return held.fencingToken();
            });
            assertThat(unrelated.get(20, TimeUnit.SECONDS)).as("the pipeline's token against the holder's")
                    .isGreaterThan(holder);
        });
    }

    @Test
    void aCallFromAnotherSubscriberDoesNotJoin() {
        contextRunner.run(context -> {
            Locked locked = context.getBean(Locked.class);
            Inner inner = context.getBean(Inner.class);
            Disposable holder = holdUntilDisposed(locked, "nested-2");
            StepVerifier.create(inner.token("nested-2")).expectError(LockWaitTimeoutException.class).verify(TIMEOUT);
            holder.dispose();
        });
    }

    /** Holds the lock on {@code id} from its grant until the returned subscription is disposed. */
    private static Disposable holdUntilDisposed(Locked locked, String id) throws InterruptedException {
        CountDownLatch holding = new CountDownLatch(1);
        Disposable holder = locked.hold(id, Mono.<String>never().doOnSubscribe(s -> holding.countDown())).subscribe();
        assertThat(holding.await(20, TimeUnit.SECONDS)).isTrue();
        return holder;
    }

    private static void purge(DynamoDbClient dynamoDb, String id) {
        dynamoDb.deleteItem(b -> b.tableName(TABLE).key(Map.of("pk", AttributeValue.fromS(id),
                "sk", AttributeValue.fromS("default"))));
    }

    public static class LostLeases implements LockListener {

        final Map<String, Boolean> lost = new ConcurrentHashMap<>();

        @Override
        public void onLost(LockHandle lock) {
            lost.put(lock.entity(), true);
        }
    }

    public static class Inner {

        @QueueLocked(entity = "#id", maxWait = "0", onWaitTimeout = WaitTimeoutPolicy.SKIP)
        public Mono<Void> skipUnlessFree(String id, AtomicBoolean ran) {
            return Mono.fromRunnable(() -> ran.set(true));
        }

        /** The fencing token of the lock it runs under, waiting for it as long as a test may. */
        @QueueLocked(entity = "#id", maxWait = "20s")
        public Mono<Long> patientToken(String id) {
            return scopesToken();
        }

        /** The fencing token of the lock it runs under; waits not at all. */
        @QueueLocked(entity = "#id", maxWait = "0")
        public Mono<Long> token(String id) {
            return scopesToken();
        }

        private static Mono<Long> scopesToken() {
            return Mono.deferContextual(context ->
                    Mono.just(ReactiveLockOperations.scope(context).locks().get(0).fencingToken()));
        }
    }

    public static class Locked {

        final AtomicInteger counter = new AtomicInteger();
        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger maxInside = new AtomicInteger();
        /** Calls of the methods that count them. */
        final AtomicInteger calls = new AtomicInteger();
        private final Inner inner;
        private final LockTemplate locks;

        public Locked(Inner inner, LockTemplate locks) {
            this.inner = inner;
            this.locks = locks;
        }

        public int counter() {
            return counter.get();
        }

        public int maxInside() {
            return maxInside.get();
        }

        /** Reads, waits, writes: an update is lost if two run at once. */
        @QueueLocked(entity = "#id")
        public Mono<Integer> increment(String id) {
            return Mono.fromCallable(() -> {
                maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                return counter.get();
            }).delayElement(Duration.ofMillis(5)).map(n -> {
                counter.set(n + 1);
                inside.decrementAndGet();
                return n + 1;
            });
        }

        @QueueLocked(entity = "#id")
        public Mono<String> hold(String id, Mono<String> body) {
            return body;
        }

        @QueueLocked(entity = "#id")
        public Mono<?> holdAny(String id, Mono<?> body) {
            return body;
        }

        @QueueLocked(entity = "#id")
        public Flux<Integer> many(String id, Flux<Integer> body) {
            return body;
        }

        /** Read through the proxy, whose own fields are empty. */
        public int calls() {
            return calls.get();
        }

        @QueueLocked(entity = "#key")
        public Mono<String> monoOf(Object key) {
            calls.incrementAndGet();
            return Mono.just("ran");
        }

        @QueueLocked(entity = "#key")
        public Flux<String> fluxOf(Object key) {
            calls.incrementAndGet();
            return Flux.just("ran");
        }

        @QueueLocked(entity = "#key.substring(3)")
        public Mono<String> monoOfTail(String key) {
            calls.incrementAndGet();
            return Mono.just("ran");
        }

        @QueueLocked(entity = "#key.substring(3)")
        public Flux<String> fluxOfTail(String key) {
            calls.incrementAndGet();
            return Flux.just("ran");
        }

        @QueueLocked(entity = "#id", maxWait = "0")
        public Mono<String> noWait(String id) {
            return Mono.just("ran");
        }

        @QueueLocked(entity = "#id", maxWait = "200ms")
        public Mono<String> shortWait(String id) {
            return Mono.just("ran");
        }

        @QueueLocked(entity = "#id", minHold = "1h")
        public Mono<String> heldAtLeast1h(String id, Mono<String> body) {
            return body;
        }

        @QueueLocked(entity = "#id", minHold = "1s")
        public Mono<String> heldAtLeast1s(String id, Mono<String> body) {
            return body;
        }

        @QueueLocked(entity = "#id", maxWait = "200ms", onWaitTimeout = WaitTimeoutPolicy.SKIP)
        public Mono<Void> skipWhenBusy(String id, AtomicBoolean ran) {
            return Mono.fromRunnable(() -> ran.set(true));
        }

        /** A blocking method of the lock that blocks on {@link Inner#skipUnlessFree} of the same lock. */
        @QueueLocked(entity = "#id")
        public void blockingOuterThenSkippable(String id, AtomicBoolean ran) {
            inner.skipUnlessFree(id, ran).block(TIMEOUT);
        }

        /** A blocking method of the lock that blocks on {@link Inner#token} of the same lock, carrying its hold. */
        @QueueLocked(entity = "#id")
        public long[] blockingOuterThenInner(String id, boolean carry) {
            long outer = locks.currentScope().locks().get(0).fencingToken();
            Mono<Long> token = inner.token(id);
            if (carry) {
                token = token.contextWrite(ReactiveLockOperations.inScope(locks.currentScope()));
            }
            return new long[] {outer, token.block(TIMEOUT)};
        }

        @QueueLocked(entity = "#id")
        public Mono<long[]> outerThenInner(String id) {
            return Mono.deferContextual(context -> {
                long outer = ReactiveLockOperations.scope(context).locks().get(0).fencingToken();
                return inner.token(id).map(innerToken -> new long[] {outer, innerToken});
            });
        }
    }
}
