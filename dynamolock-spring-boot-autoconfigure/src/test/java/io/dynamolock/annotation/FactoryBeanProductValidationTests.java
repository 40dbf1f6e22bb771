package io.dynamolock.annotation;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.annotation.QueueLockedValidationTests.BadSaving;
import io.dynamolock.annotation.QueueLockedValidationTests.FinalPayments;
import io.dynamolock.annotation.QueueLockedValidationTests.Saving;
import io.dynamolock.annotation.QueueLockedValidationTests.Settlement;
import io.dynamolock.autoconfigure.DynamoDbLocalProperties;
import io.dynamolock.autoconfigure.DynamoLockAutoConfiguration;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.test.DynamoDbLocal;
import io.dynamolock.core.LockInfo;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;

/**
 * A {@link FactoryBean}'s product is the bean that is proxied and called: the start checks its class and its proxy,
 * not the factory's declared object type or the factory instance, and the template outlives it. The products' classes
 * are {@link QueueLockedValidationTests}'s.
 */
@ExtendWith(OutputCaptureExtension.class)
class FactoryBeanProductValidationTests {

    private static final DynamoDbLocal LOCAL = DynamoDbLocal.shared();

    private static final String TABLE = LOCAL.newLockTable();

    private static final String FINAL_WARNING = FinalPayments.class.getName()
            + ".settle(String, LockTemplate) does not work";

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DynamoLockAutoConfiguration.class))
            .withPropertyValues(DynamoDbLocalProperties.of(TABLE,
                    "dynamolock.lease-duration=10s",
                    "dynamolock.heartbeat-interval=5s"));

    /**
     * The factory declares an interface; its product, made for an eager bean during the start, is of a class with a
     * bad declaration: the start fails, as for any bean, rather than the first call.
     */
    @Test
    void checksTheClassOfAFactoryBeanProductCreatedDuringTheStart() {
        contextRunner.withBean("saving", SavingFactory.class).withBean(SavingUser.class)
                .run(context -> assertThat(context).getFailure()
                        .isInstanceOf(QueueLockedConfigurationException.class)
                        .hasMessageContaining("@QueueLocked on " + BadSaving.class.getName() + ".save(String):"
                                + " entity expression '#orderid' refers to #orderid, which is not a parameter of"
                                + " the method; parameters are [orderId]"));
    }

    /** A product created after the start, as a JDK proxy: its final method is called through its interface, locked. */
    @Test
    void aFinalMethodOfAJdkProxiedFactoryBeanProductCreatedAfterTheStartIsNotWarnedAbout(CapturedOutput output) {
        contextRunner.withPropertyValues("spring.aop.proxy-target-class=false")
                .withBean("payments", PaymentsFactory.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertSettlesLocked(context.getBean(Settlement.class), context.getBean(LockTemplate.class));
                });
        assertThat(output).doesNotContain(FINAL_WARNING);
    }

    /** The same with the product created during the start, for an eager bean. */
    @Test
    void aFinalMethodOfAJdkProxiedFactoryBeanProductCreatedDuringTheStartIsNotWarnedAbout(CapturedOutput output) {
        contextRunner.withPropertyValues("spring.aop.proxy-target-class=false")
                .withBean("payments", PaymentsFactory.class).withBean(SettlementUser.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertSettlesLocked(context.getBean(SettlementUser.class).settlement,
                            context.getBean(LockTemplate.class));
                });
        assertThat(output).doesNotContain(FINAL_WARNING);
    }

    /** A class-based proxy of the product cannot override the final method: that is warned about at the start. */
    @Test
    void aFinalMethodOfAClassProxiedFactoryBeanProductCreatedDuringTheStartIsWarnedAbout(CapturedOutput output) {
        contextRunner.withBean("payments", PaymentsFactory.class).withBean(SettlementUser.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(output).contains(FINAL_WARNING);
                });
    }

    /** A @QueueLocked call on a product, from a destroy() (a flush under the lock): the template is still open. */
    @Test
    void aFactoryBeanProductCalledWhenAnotherBeanIsDestroyedStillGetsTheLock() {
        FlushThroughProductOnShutdown.outcome.set(null);
        contextRunner.withUserConfiguration(FlushThroughProductOnShutdown.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(Flushing.class).flush("running")).isEqualTo("flushed running");
        });
        assertThat(FlushThroughProductOnShutdown.outcome.get()).as("what the @QueueLocked call in a destroy() got")
                .isEqualTo("flushed pending");
    }

    /**
     * A Spring Data repository's shape: the product is a proxy of the annotated interface over a target of a class
     * that does not implement it. The interface's methods are what is called: the start checks them, naming the
     * interface, when the product is made during the start...
     */
    @Test
    void checksTheInterfaceOfARepositoryShapedProductCreatedDuringTheStart() {
        contextRunner.withBean("orders", RepositoryFactory.class).withBean(RepositoryUser.class)
                .run(context -> assertThat(context).getFailure()
                        .isInstanceOf(QueueLockedConfigurationException.class)
                        .hasMessageContaining("@QueueLocked on " + OrderRepository.class.getName() + ".save(String):"
                                + " entity expression '#orderid' refers to #orderid, which is not a parameter of"
                                + " the method; parameters are [orderId]"));
    }

    /** ... and by the factory's declared object type when nothing asks for the product at the start. */
    @Test
    void checksTheInterfaceOfARepositoryShapedProductNotCreatedDuringTheStart() {
        contextRunner.withBean("orders", RepositoryFactory.class)
                .run(context -> assertThat(context).getFailure()
                        .isInstanceOf(QueueLockedConfigurationException.class)
                        .hasMessageContaining("@QueueLocked on " + OrderRepository.class.getName() + ".save(String):"));
    }

    /** A repository-shaped product called from a destroy(): the template outlives it too. */
    @Test
    void aRepositoryShapedProductCalledWhenAnotherBeanIsDestroyedStillGetsTheLock() {
        FlushThroughRepositoryOnShutdown.outcome.set(null);
        contextRunner.withUserConfiguration(FlushThroughRepositoryOnShutdown.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(FlushingRepository.class).flush("running")).isEqualTo("flush running");
        });
        assertThat(FlushThroughRepositoryOnShutdown.outcome.get()).as("what the @QueueLocked call in a destroy() got")
                .isEqualTo("flush pending");
    }

    /**
     * A repository interface that gives a class type variable of the interface it extends (Void for R): the start
     * judges the method by the repository interface, and so does the call, not by the backend's class, which does not
     * implement it (R read as Object: every call refused SKIP, naming a method the backend does not have).
     */
    @Test
    void aSkipMethodWhoseResultTheRepositoryInterfaceMakesVoidIsLockedAtTheCall() {
        contextRunner.withBean("handlers", VoidHandlerRepositoryFactory.class).run(context -> {
            assertThat(context).hasNotFailed();
            HeldByTheCall.template.set(context.getBean(LockTemplate.class));
            assertThat(context.getBean(VoidHandlerRepository.class).handle("h-1")).isNull();
            assertThat(HeldByTheCall.entities.get()).containsExactly("h-1");
        });
    }

    /** The same for a result the repository interface makes a Mono: followed as a declared one, not refused. */
    @Test
    void aMethodWhoseResultTheRepositoryInterfaceMakesAMonoIsFollowedAtTheCall() {
        contextRunner.withBean("monos", MonoHandlerRepositoryFactory.class).run(context -> {
            assertThat(context).hasNotFailed();
            HeldByTheCall.template.set(context.getBean(LockTemplate.class));
            Mono<String> handled = context.getBean(MonoHandlerRepository.class).handle("m-1");
            assertThat(handled.block(Duration.ofSeconds(10))).isEqualTo("[m-1]");
        });
    }

    /**
     * Two repositories over backends of one class, their interfaces making R a Mono and a String: each call is judged
     * by its own interface (a method judged once per backend class would be one of them for both).
     */
    @Test
    void repositoriesOverOneBackendClassAreEachJudgedByTheirOwnInterface() {
        contextRunner.withBean("monos", MonoHandlerRepositoryFactory.class)
                .withBean("strings", StringHandlerRepositoryFactory.class).run(context -> {
                    assertThat(context).hasNotFailed();
                    HeldByTheCall.template.set(context.getBean(LockTemplate.class));
                    assertThat(context.getBean(StringHandlerRepository.class).handle("s-1")).isEqualTo("[s-1]");
                    assertThat(context.getBean(MonoHandlerRepository.class).handle("m-2")
                            .block(Duration.ofSeconds(10))).isEqualTo("[m-2]");
                    assertThat(context.getBean(StringHandlerRepository.class).handle("s-2")).isEqualTo("[s-2]");
                });
    }

    /**
     * SimpleJpaRepository's shape: the backend has a public method of the repository method's signature (save, count,
     * flush...). The start counts the interface's annotation, and the call holds the lock.
     */
    @Test
    void aRepositoryMethodTheBackendAlsoDeclaresIsLocked() {
        contextRunner.withBean("orders", ShadowedRepositoryFactory.class).run(context -> {
            assertThat(context).hasNotFailed();
            HeldByTheCall.template.set(context.getBean(LockTemplate.class));
            assertThat(context.getBean(LockedOrderRepository.class).save("o-1")).isEqualTo("[o-1]");
        });
    }

    private static void assertSettlesLocked(Settlement settlement, LockTemplate locks) {
        assertThat(Proxy.isProxyClass(settlement.getClass())).isTrue();
        assertThat(settlement.settle("o-9", locks)).containsExactly("o-9");
    }

    public static class SavingFactory implements FactoryBean<Saving> {

        @Override
        public Saving getObject() {
            return new BadSaving();
        }

        @Override
        public Class<?> getObjectType() {
            return Saving.class;
        }
    }

    public static class SavingUser {

        final Saving saving;

        public SavingUser(Saving saving) {
            this.saving = saving;
        }
    }

    public static class PaymentsFactory implements FactoryBean<FinalPayments> {

        @Override
        public FinalPayments getObject() {
            return new FinalPayments();
        }

        @Override
        public Class<?> getObjectType() {
            return FinalPayments.class;
        }
    }

    public static class SettlementUser {

        final Settlement settlement;

        public SettlementUser(Settlement settlement) {
            this.settlement = settlement;
        }
    }

    public interface Flushing {

        String flush(String id);
    }

    public static class LockedFlusher implements Flushing {

        @Override
        @QueueLocked(entity = "#id")
        public String flush(String id) {
            return "flushed " + id;
        }
    }

    public static class FlusherFactory implements FactoryBean<Flushing> {

        @Override
        public Flushing getObject() {
            return new LockedFlusher();
        }

        @Override
        public Class<?> getObjectType() {
            return Flushing.class;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class FlushThroughProductOnShutdown {

        static final AtomicReference<String> outcome = new AtomicReference<>();

        @Bean
        FlusherFactory flusher() {
            return new FlusherFactory();
        }

        @Bean
        DisposableBean flushOnShutdown(Flushing flusher) {
            return () -> {
                try {
                    outcome.set(flusher.flush("pending"));
                }
                catch (RuntimeException ex) {
                    outcome.set(ex.toString());
                }
            };
        }
    }

    /** A repository whose declaration is bad: the parameter is orderId. */
    public interface OrderRepository {

        @QueueLocked(entity = "#orderid")
        String save(String orderId);
    }

    public interface FlushingRepository {

        @QueueLocked(entity = "#id")
        String flush(String id);
    }

    /** What a repository proxy calls: SimpleJpaRepository's place, implementing none of the annotated interfaces. */
    public static class RepositoryBackend {
    }

    /**
     * Like RepositoryFactoryBeanSupport: a proxy of the interface over a backend (a {@link RepositoryBackend} unless
     * given) that does not implement it, its advice answering every call (with the method's name and argument unless
     * given).
     */
    abstract static class RepositoryShapedFactory<T> implements FactoryBean<T> {

        private final Class<T> repository;
        private final Object backend;
        private final Function<MethodInvocation, Object> answer;

        RepositoryShapedFactory(Class<T> repository) {
            this(repository, new RepositoryBackend(), invocation -> invocation.getMethod().getName() + " "
                    + invocation.getArguments()[0]);
        }

        RepositoryShapedFactory(Class<T> repository, Object backend, Function<MethodInvocation, Object> answer) {
            this.repository = repository;
            this.backend = backend;
            this.answer = answer;
        }

        @Override
        public T getObject() {
            ProxyFactory proxy = new ProxyFactory(backend);
            proxy.addInterface(repository);
            proxy.addAdvice((MethodInterceptor) answer::apply);
            return repository.cast(proxy.getProxy(getClass().getClassLoader()));
        }

        @Override
        public Class<?> getObjectType() {
            return repository;
        }
    }

    public static class RepositoryFactory extends RepositoryShapedFactory<OrderRepository> {

        public RepositoryFactory() {
            super(OrderRepository.class);
        }
    }

    public static class FlushingRepositoryFactory extends RepositoryShapedFactory<FlushingRepository> {

        public FlushingRepositoryFactory() {
            super(FlushingRepository.class);
        }
    }

    /** The lock template of the running context, and the entities the last repository call held, noted by it. */
    static final class HeldByTheCall {

        static final AtomicReference<LockTemplate> template = new AtomicReference<>();

        static final AtomicReference<List<String>> entities = new AtomicReference<>();

        /** Notes and returns the entities held now. */
        static List<String> note() {
            List<String> held = template.get().activeLocks().stream().filter(LockInfo::holding)
                    .map(LockInfo::entity).toList();
            entities.set(held);
            return held;
        }
    }

    public interface Handler<R> {

        @QueueLocked(entity = "#id", onWaitTimeout = WaitTimeoutPolicy.SKIP)
        R handle(String id);
    }

    public interface VoidHandlerRepository extends Handler<Void> {
    }

    public static class VoidHandlerRepositoryFactory extends RepositoryShapedFactory<VoidHandlerRepository> {

        public VoidHandlerRepositoryFactory() {
            super(VoidHandlerRepository.class, new RepositoryBackend(), invocation -> {
                HeldByTheCall.note();
                return null;
            });
        }
    }

    public interface ValueHandler<R> {

        @QueueLocked(entity = "#id")
        R handle(String id);
    }

    public interface MonoHandlerRepository extends ValueHandler<Mono<String>> {
    }

    public interface StringHandlerRepository extends ValueHandler<String> {
    }

    public static class MonoHandlerRepositoryFactory extends RepositoryShapedFactory<MonoHandlerRepository> {

        public MonoHandlerRepositoryFactory() {
            super(MonoHandlerRepository.class, new RepositoryBackend(),
                    invocation -> Mono.fromCallable(() -> HeldByTheCall.note().toString()));
        }
    }

    public static class StringHandlerRepositoryFactory extends RepositoryShapedFactory<StringHandlerRepository> {

        public StringHandlerRepositoryFactory() {
            super(StringHandlerRepository.class, new RepositoryBackend(),
                    invocation -> HeldByTheCall.note().toString());
        }
    }

    public interface LockedOrderRepository {

        @QueueLocked(entity = "#orderId")
        String save(String orderId);
    }

    /** SimpleJpaRepository's place, with a public method of the repository's signature, as its save(S). */
    public static class ShadowingBackend {

        public String save(String orderId) {
            return "saved by the backend, unlocked: " + orderId;
        }
    }

    public static class ShadowedRepositoryFactory extends RepositoryShapedFactory<LockedOrderRepository> {

        public ShadowedRepositoryFactory() {
            super(LockedOrderRepository.class, new ShadowingBackend(), invocation -> HeldByTheCall.note().toString());
        }
    }

    public static class RepositoryUser {

        final OrderRepository repository;

        public RepositoryUser(OrderRepository repository) {
            this.repository = repository;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class FlushThroughRepositoryOnShutdown {

        static final AtomicReference<String> outcome = new AtomicReference<>();

        @Bean
        FlushingRepositoryFactory flushingRepository() {
            return new FlushingRepositoryFactory();
        }

        @Bean
        DisposableBean flushOnShutdown(FlushingRepository repository) {
            return () -> {
                try {
                    outcome.set(repository.flush("pending"));
                }
                catch (RuntimeException ex) {
                    outcome.set(ex.toString());
                }
            };
        }
    }
}
