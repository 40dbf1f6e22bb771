package io.dynamolock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.dynamolock.autoconfigure.DynamoDbLocalProperties;
import io.dynamolock.autoconfigure.DynamoLockAutoConfiguration;
import io.dynamolock.autoconfigure.DynamoLockReactiveAutoConfiguration;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.test.DynamoDbLocal;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import kotlinx.coroutines.Deferred;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * An entity expression naming a future or a publisher: its string is the instance's (a future's identity hash and
 * state) or the operator's ({@code MonoJust}), not the order's, so two calls for one order would hold two locks and
 * calls for unrelated orders one. It is refused at the start where the declared type says so, else at the call.
 */
class EntityOfAsyncParameterTests {

    private static final DynamoDbLocal LOCAL = DynamoDbLocal.shared();
    private static final String TABLE = LOCAL.newLockTable();

    private static final String FIX = "Name the key inside it, e.g. resolve the order first and lock on its id, or"
            + " take the lock inside the pipeline with ReactiveLockOperations or LockTemplate";

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DynamoLockAutoConfiguration.class,
                    DynamoLockReactiveAutoConfiguration.class))
            .withPropertyValues(DynamoDbLocalProperties.of(TABLE));

    @Test
    void failsOnAMonoParameter() {
        assertFails(MonoOrder.class, MonoOrder.class.getName() + ".save(Mono): entity expression '#order' is a"
                + " reactor.core.publisher.Mono, a value that arrives later, not a key");
        assertFails(MonoOrder.class, FIX);
    }

    @Test
    void failsOnACompletableFutureParameter() {
        assertFails(FutureOrder.class, FutureOrder.class.getName() + ".save(CompletableFuture): entity expression"
                + " '#p0' is a java.util.concurrent.CompletableFuture, a value that arrives later, not a key");
    }

    @Test
    void failsOnOtherLaterWorkParameters() {
        assertFails(PublisherOrder.class, "entity expression '#order' is a org.reactivestreams.Publisher");
        assertFails(FluxOrder.class, "entity expression '#order' is a reactor.core.publisher.Flux");
        assertFails(DeferredOrder.class, "entity expression '#order' is a kotlinx.coroutines.Deferred");
    }

    /** The elements of a collection or an array are the entities. */
    @Test
    void failsOnACollectionOrArrayOfFutures() {
        assertFails(FutureOrders.class, FutureOrders.class.getName() + ".save(List): entity expression '#orders'"
                + " is a java.util.concurrent.CompletableFuture");
        assertFails(MonoOrders.class, MonoOrders.class.getName() + ".save(Mono[]): entity expression '#orders'"
                + " is a reactor.core.publisher.Mono");
    }

    /** An Optional's value is the entity, and its elements if it is a collection. */
    @Test
    void failsOnAnOptionalOfFutures() {
        assertFails(OptionalFutureOrder.class, OptionalFutureOrder.class.getName() + ".save(Optional): entity"
                + " expression '#order' is a java.util.concurrent.CompletableFuture, a value that arrives later");
        assertFails(OptionalMonoOrders.class, OptionalMonoOrders.class.getName() + ".save(Optional): entity"
                + " expression '#orders' is a reactor.core.publisher.Mono");
    }

    /** A property path off a parameter is checked at its end as the parameter itself is. */
    @Test
    void failsOnAPathEndingInAFuture() {
        assertFails(FuturePath.class, FuturePath.class.getName() + ".save(Checkout): entity expression"
                + " '#checkout.order' is a java.util.concurrent.CompletableFuture, a value that arrives later, not a"
                + " key");
    }

    /** Declared as Object: each value is checked at the call, before any lock is taken. */
    @Test
    void aFutureValueFailsAtTheCallWithoutLockingOrRunning() {
        contextRunner.withBean(AnyOrder.class).run(context -> {
            AnyOrder orders = context.getBean(AnyOrder.class);
            LockTemplate locks = context.getBean(LockTemplate.class);
            CompletableFuture<String> order = CompletableFuture.completedFuture("order-1");
            assertThatIllegalArgumentException().isThrownBy(() -> orders.save(order))
                    .withMessageContaining("@QueueLocked entity expression '#order' of " + AnyOrder.class.getName()
                            + ".save(Object) evaluated to a java.util.concurrent.CompletableFuture ('" + order
                            + "'), a value that arrives later, not a key")
                    .withMessageContaining(FIX)
                    .withMessageContaining("No lock was taken");
            assertThatIllegalArgumentException().isThrownBy(() -> orders.save(List.of("order-1", Mono.just("x"))))
                    .withMessageContaining("yielded a reactor.core.publisher.MonoJust ('MonoJust'), a value that"
                            + " arrives later");
            // A Mono method fails its Mono, as a reactive caller expects.
            StepVerifier.create(orders.saveMono(Mono.just("order-1"))).expectErrorSatisfies(failure ->
                    assertThat(failure).isInstanceOf(IllegalArgumentException.class)
                            .hasMessageContaining(".saveMono(Object) evaluated to a reactor.core.publisher.MonoJust"))
                    .verify(Duration.ofSeconds(20));
            assertThat(orders.calls()).isZero();
            assertThat(locks.activeLocks()).isEmpty();
        });
    }

    /** Values with a string of their own lock as ever. */
    @Test
    void ordinaryValuesLock() {
        contextRunner.withBean(AnyOrder.class).run(context -> {
            AnyOrder orders = context.getBean(AnyOrder.class);
            UUID id = UUID.randomUUID();
            assertThat(orders.save("order-1")).containsExactly("order-1");
            assertThat(orders.save(42L)).containsExactly("42");
            assertThat(orders.save(id)).containsExactly(id.toString());
            assertThat(orders.save(new OrderKey("order-2"))).containsExactly("OrderKey[id=order-2]");
            assertThat(orders.save(Status.OPEN)).containsExactly("OPEN");
            assertThat(orders.save(List.of("order-3", 7L))).containsExactlyInAnyOrder("order-3", "7");
            assertThat(orders.saveMono("order-4").block()).isEqualTo("order-4");
            assertThat(orders.calls()).isEqualTo(7);
        });
    }

    private void assertFails(Class<?> bean, String message) {
        contextRunner.withBean(bean).run(context -> assertThat(context).getFailure()
                .isInstanceOf(QueueLockedConfigurationException.class).hasMessageContaining(message));
    }

    public record OrderKey(String id) {
    }

    public enum Status {
        OPEN
    }

    public static class AnyOrder {

        private final AtomicInteger calls = new AtomicInteger();
        private final LockTemplate locks;

        public AnyOrder(LockTemplate locks) {
            this.locks = locks;
        }

        /** Read through the proxy, whose own fields are empty. */
        public int calls() {
            return calls.get();
        }

        /** The entities this call holds. */
        @QueueLocked(entity = "#order")
        public List<String> save(Object order) {
            calls.incrementAndGet();
            return locks.activeLocks().stream().map(lock -> lock.entity()).toList();
        }

        @QueueLocked(entity = "#order")
        public Mono<String> saveMono(Object order) {
            calls.incrementAndGet();
            return Mono.just(String.valueOf(order));
        }
    }

    public static class MonoOrder {

        @QueueLocked(entity = "#order")
        public Mono<String> save(Mono<String> order) {
            return order;
        }
    }

    public static class FutureOrder {

        @QueueLocked(entity = "#p0")
        public CompletableFuture<String> save(CompletableFuture<String> order) {
            return order;
        }
    }

    public static class PublisherOrder {

        @QueueLocked(entity = "#order")
        public void save(Publisher<String> order) {
        }
    }

    public static class FluxOrder {

        @QueueLocked(entity = "#order")
        public void save(Flux<String> order) {
        }
    }

    public static class DeferredOrder {

        @QueueLocked(entity = "#order")
        public void save(Deferred<String> order) {
        }
    }

    public static class FutureOrders {

        @QueueLocked(entity = "#orders")
        public void save(List<CompletableFuture<String>> orders) {
        }
    }

    public static class MonoOrders {

        @QueueLocked(entity = "#orders")
        public void save(Mono<String>[] orders) {
        }
    }

    public static class OptionalFutureOrder {

        @QueueLocked(entity = "#order")
        public void save(Optional<CompletableFuture<String>> order) {
        }
    }

    public static class OptionalMonoOrders {

        @QueueLocked(entity = "#orders")
        public void save(Optional<List<Mono<String>>> orders) {
        }
    }

    public record Checkout(CompletableFuture<String> order) {
    }

    public static class FuturePath {

        @QueueLocked(entity = "#checkout.order")
        public void save(Checkout checkout) {
        }
    }
}
