package io.dynamolock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import io.dynamolock.autoconfigure.DynamoDbLocalProperties;
import io.dynamolock.autoconfigure.DynamoLockAutoConfiguration;
import io.dynamolock.core.LockInfo;
import io.dynamolock.core.LockMode;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.test.DynamoDbLocal;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Flow;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import kotlinx.coroutines.JobKt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.LazyInitializationBeanFactoryPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Controller;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.context.request.async.WebAsyncTask;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** Each declaration error stops the start with a message naming class, method and value. */
@ExtendWith(OutputCaptureExtension.class)
class QueueLockedValidationTests {

    private static final DynamoDbLocal LOCAL = DynamoDbLocal.shared();

    private static final String TABLE = LOCAL.newLockTable();

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DynamoLockAutoConfiguration.class))
            .withPropertyValues(DynamoDbLocalProperties.of(TABLE,
                    "dynamolock.lease-duration=10s",
                    "dynamolock.heartbeat-interval=5s",
                    "orders.wait=5s"));

    @Test
    void startsWithValidMethods() {
        contextRunner.withBean(Valid.class).run(context -> assertThat(context).hasNotFailed());
    }

    /**
     * A reactive method's first calls run on event loops: had they looked the template up, two of them at once
     * would park on the bean factory's locks (seen in CI). So the start looks it up, once.
     */
    @Test
    void looksTheLockTemplateUpAtStartNotOnTheFirstCall(CapturedOutput output) {
        List<String> lookedUpOn = new CopyOnWriteArrayList<>();
        contextRunner.withBean(Plain.class)
                .withBean(QueueLockedAdvisor.class, () -> new QueueLockedAdvisor(() -> {
                    lookedUpOn.add(Thread.currentThread().getName());
                    return LockTemplate.builder(LOCAL.client()).tableName(TABLE).build();
                }, () -> LostLeasePolicy.FAIL, new StandardEnvironment(), new DefaultListableBeanFactory(), 0,
                        event -> { }))
                .run(context -> {
                    assertThat(lookedUpOn).containsExactly(Thread.currentThread().getName());
                    context.getBean(Plain.class).run("a");
                    assertThat(lookedUpOn).hasSize(1);
                });
        // The validator, a post-processor, asks for the advisor only once the singletons exist: created with the
        // post-processors, an application's advisor would miss some of them, and Spring would say so.
        assertThat(output).doesNotContain("is not eligible for getting processed by all BeanPostProcessors");
    }

    /**
     * No template at start (defined later, or in a context that comes up after this one): a lease or a namespace
     * cannot be checked against it yet, and the start goes on, as it does for a method with neither.
     */
    @Test
    void startsWithoutATemplateYetWhateverTheMethodsAsk() {
        contextRunner.withBean(WithLeaseAndNamespace.class)
                .withBean(QueueLockedAdvisor.class, () -> new QueueLockedAdvisor(() -> {
                    throw new NoSuchBeanDefinitionException(LockTemplate.class);
                }, () -> LostLeasePolicy.FAIL, new StandardEnvironment(), new DefaultListableBeanFactory(), 0,
                        event -> { }))
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void failsOnEntityExpressionThatDoesNotParse() {
        assertFails(BadSyntax.class, "@QueueLocked on " + BadSyntax.class.getName() + ".run(String):"
                + " entity expression '#id +' does not parse");
    }

    @Test
    void failsOnEntityExpressionNamingNoParameter() {
        assertFails(UnknownParameter.class, UnknownParameter.class.getName() + ".run(String, int):"
                + " entity expression '#orderid' refers to #orderid, which is not a parameter of the method;"
                + " parameters are [orderId, quantity]");
    }

    @Test
    void failsOnAPositionalVariablePastTheLastParameter() {
        assertFails(PastTheLastParameter.class, PastTheLastParameter.class.getName() + ".run(String): entity"
                + " expression '#p1' refers to #p1, but the method has 1 parameter: #p0 (orderId)");
        assertFails(NoParameters.class, NoParameters.class.getName() + ".run(): entity expression '#a0' refers to"
                + " #a0, but the method has no parameters");
    }

    @Test
    void failsOnABeanReferenceToNoBean() {
        assertFails(UnknownBean.class, UnknownBean.class.getName() + ".run(String): entity expression"
                + " '@orderKeyz.of(#orderId)' refers to the bean 'orderKeyz', which the context does not have");
    }

    /** Bean names with a dot (an @Import-ed class, a @ConfigurationProperties bean) come quoted in SpEL. */
    @Test
    void startsWithBeanReferencesToBeansWhoseNamesHaveDots() {
        contextRunner.withBean("order.keys", OrderKeys.class, OrderKeys::new).withBean(DottedBeanUser.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(DottedBeanUser.class).run("1")).isEqualTo("ran 1");
                });
    }

    /** Its string is an identity hash: no two calls, and no two JVMs, would share the lock. */
    @Test
    void failsOnAParameterWhoseTypeHasNoToStringOfItsOwn() {
        assertFails(IdentityEntity.class, IdentityEntity.class.getName() + ".update(OrderRef): entity expression"
                + " '#order' is a " + OrderRef.class.getName() + ", whose toString() is Object's: an identity hash,"
                + " different for each instance and each JVM, so no two calls would share a lock. Name a stable key"
                + " such as #order.id, or give OrderRef a toString() that names the entity");
    }

    /** An Optional's value is the entity: checked as a parameter of the value's type is. */
    @Test
    void failsOnAnOptionalOfATypeWithoutToStringOfItsOwn() {
        assertFails(OptionalIdentityEntity.class, OptionalIdentityEntity.class.getName() + ".update(Optional): entity"
                + " expression '#order' is an Optional of a " + OrderRef.class.getName() + ", whose toString() is"
                + " Object's: an identity hash");
    }

    /** A record is final: no value of it can have another property, so the typo fails the start, not each call. */
    @Test
    void failsOnAPropertyARecordDoesNotHave() {
        assertFails(RecordTypo.class, RecordTypo.class.getName() + ".run(OrderKey): entity expression '#key.idd'"
                + " reads the property 'idd' of " + OrderKey.class.getName() + ", which has none of that name (no"
                + " getIdd(), isIdd() or idd() method, no public field idd) and is final, so no value can have it;"
                + " its properties are [id]");
    }

    @Test
    void failsOnAPropertyAFinalClassDoesNotHave() {
        assertFails(FinalClassTypo.class, "entity expression '#sku.cod' reads the property 'cod' of "
                + Sku.class.getName() + ", which has none of that name (no getCod(), isCod() or cod() method, no"
                + " public field cod) and is final, so no value can have it; its properties are [active, code,"
                + " region]");
    }

    /** A subclass (the value a call passes) may have the property the declared class lacks: checked at the call. */
    @Test
    void startsWithAPropertyANonFinalClassDoesNotHave() {
        contextRunner.withBean(NonFinalClassPath.class).run(context -> assertThat(context).hasNotFailed());
    }

    /** {@code #attributes.tenant} reads an entry, not a property of the map's class. */
    @Test
    void startsWithAPathIntoAMap() {
        contextRunner.withBean(MapPath.class).run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void startsWithRecordComponentsGettersAndFields() {
        contextRunner.withBean(ReadablePaths.class).run(context -> assertThat(context).hasNotFailed());
    }

    /** SpEL takes the first method a property's name finds; a void one it passes over for the public field. */
    @Test
    void aVoidMethodOfThePropertysNameLeavesThePublicField() {
        contextRunner.withBean(VoidAccessorPath.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(VoidAccessorPath.class).run(new Job("j-1"))).isEqualTo("ran j-1");
        });
    }

    public static final class Job {

        public final String id;

        Job(String id) {
            this.id = id;
        }

        public void id() {
        }
    }

    public static class VoidAccessorPath {

        @QueueLocked(entity = "#job.id.bytes")
        public String run(Job job) {
            return "ran " + job.id;
        }
    }

    /** {@code ?.} skips a null value, but a value that is there must still have the property. */
    @Test
    void checksASafeNavigationPath() {
        contextRunner.withBean(SafePath.class).run(context -> assertThat(context).hasNotFailed());
        assertFails(SafePathTypo.class, "entity expression '#shipment?.party?.nme' reads the property 'nme' of "
                + Party.class.getName() + ", which has none of that name");
        assertFails(SafePathTypo.class, "its properties are [name]");
    }

    /** A generic property is read as the type its parameter gives it ({@code Envelope<OrderKey>}). */
    @Test
    void failsOnATypoBehindAGenericProperty() {
        assertFails(GenericPathTypo.class, "entity expression '#envelope.body.idd' reads the property 'idd' of "
                + OrderKey.class.getName());
    }

    /** The end of a path is checked as a parameter is: an identity hash names no entity. */
    @Test
    void failsOnAPathEndingInAClassWithoutToStringOfItsOwn() {
        assertFails(IdentityPath.class, IdentityPath.class.getName() + ".update(Delivery): entity expression"
                + " '#p0.shipment.order' is a " + OrderRef.class.getName() + ", whose toString() is Object's: an"
                + " identity hash, different for each instance and each JVM, so no two calls would share a lock. Name"
                + " a stable key such as #p0.shipment.order.id, or give OrderRef a toString() that names the entity");
    }

    /** An interface's values, and their properties, are their implementations': checked at the call. */
    @Test
    void startsWithAPathThroughAGetterReturningAnInterface() {
        contextRunner.withBean(InterfacePath.class).run(context -> assertThat(context).hasNotFailed());
    }

    /**
     * {@code #root} is SpEL's root object, whatever the parameters are called: a parameter named root is not where the
     * path starts.
     */
    @Test
    void aParameterNamedRootDoesNotHideSpelsRootObject() {
        contextRunner.withBean(RootNamedParameter.class).run(context -> {
            assertThat(context).hasNotFailed();
            RootNamedParameter bean = context.getBean(RootNamedParameter.class);
            assertThat(bean.rebuild("/")).isEqualTo("rebuilt /");
            assertThat(bean.reload("/")).isEqualTo("reloaded /");
        });
    }

    /**
     * {@code ? super Integer} admits a value of any supertype ({@code Envelope<Object>}): its property, its elements'
     * type, are Object's, whichever level of the path the wildcard is at.
     */
    @Test
    void aLowerBoundedWildcardIsNotItsBound() {
        contextRunner.withBean(LowerBoundedWildcard.class).run(context -> {
            assertThat(context).hasNotFailed();
            LowerBoundedWildcard bean = context.getBean(LowerBoundedWildcard.class);
            assertThat(bean.handle(new Envelope<Object>(new OrderKey("o-1")))).isEqualTo("handled");
            assertThat(bean.wrapped(new Wrapper<Object>(new Envelope<>(new OrderKey("o-2"))))).isEqualTo("wrapped");
            assertThat(bean.each(new java.util.ArrayList<Object>(List.of("k-1")))).isEqualTo("each");
            assertThat(bean.batch(new Batch<Object>(new Object[] {"k-2"}))).isEqualTo("batch");
        });
    }

    /** A generic method's type variable is its own, not the class's of the same name: its value is any Object. */
    @Test
    void aMethodsOwnTypeVariableIsNotTheClasssOfTheSameName() {
        contextRunner.withBean(ShadowedTypeVariable.class).withBean(IntegerHandler.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(ShadowedTypeVariable.class).handle(new Cache<>(1, new OrderKey("o-3"))))
                    .isEqualTo("handled");
            assertThat(context.getBean(IntegerHandler.class).handle(new OrderKey("o-4"))).isEqualTo("handled");
        });
    }

    /**
     * Where every value is of one final class, a typo still fails the start: a type argument given by a superclass,
     * an upper-bounded wildcard, and a type variable (a raw type's, a generic method's) bounded by a final class.
     */
    @Test
    void failsOnATypoWhereEveryValueIsOfAFinalClass() {
        String typo = "' reads the property 'idd' of ";
        assertFails(CertainGenericTypos.class, "'#box.content.idd" + typo + OrderKey.class.getName());
        assertFails(CertainGenericTypos.class, "'#envelope.body.idd" + typo + OrderKey.class.getName());
        assertFails(CertainGenericTypos.class, "'#numbered.number.idd" + typo + Integer.class.getName());
        assertFails(CertainGenericTypos.class, "'#counter.count.idd" + typo + Integer.class.getName());
    }

    /** {@code #p1} is the second argument even where the first parameter is called p1: SpEL binds that last. */
    @Test
    void aPositionalVariableIsTheArgumentSpelBindsToIt() {
        contextRunner.withBean(PositionalNamedParameter.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(PositionalNamedParameter.class).run(new OrderKey("o-5"), new Sku()))
                    .isEqualTo("ran");
        });
    }

    /** Only one of them would lock: every caller locking the other's entity would run beside the method. */
    @Test
    void failsOnTwoQueueLockedAnnotationsOnOneMethod() {
        assertFails(TwoLocks.class, TwoLocks.class.getName() + ".run(String): carries @QueueLocked more than once"
                + " (through @OrderLocked on TwoLocks.run and @BillLocked on TwoLocks.run), but only one of them would"
                + " lock");
        assertFails(LockedTwiceDirectly.class, LockedTwiceDirectly.class.getName() + ".run(String): carries"
                + " @QueueLocked more than once (through @QueueLocked on LockedTwiceDirectly.run and @BillLocked on"
                + " LockedTwiceDirectly.run)");
    }

    /** Two interfaces lock the method in two namespaces: one request could take only one of them. */
    @Test
    void failsOnAMethodThatTwoInterfacesLockInTwoNamespaces() {
        assertFails(OrderAndBill.class, OrderAndBill.class.getName() + ".run(String, Runnable): carries @QueueLocked"
                + " more than once (through @QueueLocked on Orders.run and @QueueLocked on Bills.run)");
    }

    /** An override's own declaration replaces the interface's, and one declaration seen twice is one. */
    @Test
    void startsWithAnOverrideDeclaringItsOwnLockAndADeclarationSeenTwice() {
        contextRunner.withBean(OverridingBill.class).withBean(TwiceTheSameBill.class)
                .run(context -> assertThat(context).hasNotFailed());
    }

    /**
     * The class gets the interface's method from a superclass that does not implement the interface: the interface's
     * lock is taken all the same (a search from the method's declaring class does not see that interface).
     */
    @Test
    void anInterfaceLockOnAMethodInheritedFromASuperclassIsTaken() {
        contextRunner.withBean(InheritedBill.class).run(context -> {
            assertThat(context).hasNotFailed();
            LockTemplate locks = context.getBean(LockTemplate.class);
            Bills bills = context.getBean(Bills.class);
            AtomicReference<String> held = new AtomicReference<>();
            bills.run("1", () -> held.set(locks.currentScope().locks().stream()
                    .map(lock -> lock.namespace() + "/" + lock.entity()).toList().toString()));
            assertThat(held.get()).isEqualTo("[billing/bill-1]");
        });
    }

    /**
     * The superclass's method, which the class implements the interface with, carries a lock of its own: it replaces
     * the interface's, as an override's does, whichever class names the interface.
     */
    @Test
    void anInheritedImplementationsOwnLockReplacesTheInterfaces() {
        contextRunner.withBean(OwnInheritedBill.class).run(context -> {
            assertThat(context).hasNotFailed();
            LockTemplate locks = context.getBean(LockTemplate.class);
            AtomicReference<String> held = new AtomicReference<>();
            context.getBean(Bills.class).run("1", () -> held.set(locks.currentScope().locks().stream()
                    .map(lock -> lock.entity()).toList().toString()));
            assertThat(held.get()).isEqualTo("[own-1]");
        });
    }

    /** A static interface method is no method the class implements: its annotation locks nothing of the class's. */
    @Test
    void aStaticInterfaceMethodLendsNoLockToAnInstanceMethodOfItsName() {
        contextRunner.withBean(StaticNamesake.class).run(context -> {
            LockTemplate locks = context.getBean(LockTemplate.class);
            AtomicReference<String> held = new AtomicReference<>();
            context.getBean(StaticNamesake.class).run("1", () -> held.set(locks.currentScope().locks().toString()));
            assertThat(held.get()).isEqualTo("[]");
        });
    }

    /** Read as milliseconds, lease = "60" was a 60 ms lease that every call lost; 0 means the same in any unit. */
    @Test
    void failsOnADurationWithoutAUnit() {
        assertFails(UnitlessLease.class, UnitlessLease.class.getName() + ".run(String): lease '60' has no unit; write"
                + " it: 60s for seconds, 60ms if milliseconds were meant");
    }

    @Test
    void failsOnEmptyEntity() {
        assertFails(EmptyEntity.class, EmptyEntity.class.getName() + ".run(String): entity is empty");
    }

    @Test
    void failsOnAnEmptyEntityArray() {
        assertFails(NoEntities.class, NoEntities.class.getName() + ".run(String): entity is an empty array; give one"
                + " SpEL expression such as \"#orderId\", several such as {\"#from.id\", \"#to.id\"}");
    }

    @Test
    void failsOnABadExpressionAmongSeveral() {
        assertFails(OneBadOfTwo.class, OneBadOfTwo.class.getName() + ".run(String, String): entity expression"
                + " '#too' refers to #too, which is not a parameter of the method; parameters are [from, to]");
    }

    @Test
    void failsOnPermitsBelowOne() {
        assertFails(NoPermits.class, NoPermits.class.getName() + ".run(String): mode = EXCLUSIVE, permits = 0:"
                + " permits 0 is below 1; use 1 for a lock, or N > 1 for a semaphore");
    }

    @Test
    void failsOnSharedWithSeveralPermits() {
        assertFails(SharedSemaphore.class, SharedSemaphore.class.getName() + ".run(String): mode = SHARED,"
                + " permits = 3: mode SHARED with permits 3 mixes two kinds of lock");
    }

    @Test
    void failsOnWaitThatIsNoDuration() {
        assertFails(BadWait.class, BadWait.class.getName() + ".run(String): maxWait 'soon' is not a duration;"
                + " use e.g. 60s, 500ms, 2m or PT1M, 0 for no wait, or infinite");
    }

    /** Accepted, it made every call fail at the end with an overflow, and left its lock held. */
    @Test
    void failsOnMinHoldLongerThanAYear() {
        assertFails(EndlessMinHold.class, EndlessMinHold.class.getName() + ".run(String): minHold '110000d' is too"
                + " long: at most 365 days");
    }

    /** A bean that is itself a JDK proxy of its interface: the names come from the interface's method. */
    @Test
    void usesTheParameterNamesOfAnInterfaceMethodOfAJdkProxyBean() {
        AtomicReference<LockTemplate> locks = new AtomicReference<>();
        contextRunner.withBean(Payments.class, () -> (Payments) Proxy.newProxyInstance(
                Payments.class.getClassLoader(), new Class<?>[] {Payments.class}, (proxy, method, args) -> {
                    if (!method.getName().equals("pay")) {
                        return method.getName().equals("toString") ? "Payments" : null;
                    }
                    return "paid " + args[0] + " holding "
                            + locks.get().activeLocks().stream().map(lock -> lock.entity()).toList();
                }))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    locks.set(context.getBean(LockTemplate.class));
                    assertThat(context.getBean(Payments.class).pay("o-1")).isEqualTo("paid o-1 holding [o-1]");
                });
    }

    @Test
    void failsOnNegativeWait() {
        assertFails(NegativeWait.class, NegativeWait.class.getName() + ".run(String): maxWait '-1s' is negative");
    }

    @Test
    void failsOnSkipForAMethodThatReturnsAValue() {
        assertFails(SkipWithResult.class, SkipWithResult.class.getName() + ".run(String): onWaitTimeout = SKIP needs"
                + " a method returning void, Void or a future of Void (or a suspend function returning Unit): a skipped"
                + " call has no value to return, and this method returns"
                + " java.util.concurrent.CompletableFuture<java.lang.String>");
    }

    @Test
    void failsOnMinHoldThatIsNotPositive() {
        assertFails(ZeroMinHold.class, ZeroMinHold.class.getName() + ".run(String): minHold '0s' must be a positive"
                + " duration, e.g. 30s");
    }

    @Test
    void failsOnPlaceholderResolvedToNoDuration() {
        assertFails(PlaceholderWait.class, "maxWait '${orders.name}' (resolved to 'orders') is not a duration",
                "orders.name=orders");
    }

    @Test
    void failsOnUnresolvablePlaceholder() {
        assertFails(PlaceholderWait.class, "maxWait '${orders.name}': Could not resolve placeholder 'orders.name'");
    }

    @Test
    void failsOnLeaseThatIsNoDuration() {
        assertFails(BadLease.class, BadLease.class.getName() + ".run(String): lease 'infinite' is not a duration");
    }

    @Test
    void failsOnLeaseNotLongerThanHeartbeat() {
        assertFails(ShortLease.class, ShortLease.class.getName() + ".run(String): lease '5s' (PT5S) must be longer"
                + " than the heartbeat interval PT5S (dynamolock.heartbeat-interval)");
    }

    @Test
    void failsOnMorePermitsThanTheQueueMayHold() {
        assertFails(ManyPermits.class, ManyPermits.class.getName() + ".run(String): permits = 101 is more than"
                + " the 100 entries a queue may hold (dynamolock.max-queue-length): raise it to at least 101, or"
                + " ask for fewer permits");
    }

    @Test
    void failsOnLeaseLongerThanTheCoreAllows() {
        assertFails(EndlessLease.class, EndlessLease.class.getName() + ".run(String): lease '400d' is refused: lease"
                + " PT9600H is too long: at most 365 days");
    }

    @Test
    void failsOnNamespaceDynamoDbCannotTake() {
        assertFails(LongNamespace.class, LongNamespace.class.getName() + ".run(String): namespace 'nnnnnnnnnn");
        assertFails(LongNamespace.class, "is 1025 bytes in UTF-8; DynamoDB allows at most 1024 bytes");
    }

    @Test
    void failsOnFutureReturnType() {
        assertFails(ReturnsFuture.class, ReturnsFuture.class.getName() + ".run(String): returns"
                + " java.util.concurrent.Future, whose work goes on after the method returns: the lock would be"
                + " released before it is done. Supported are plain values, CompletableFuture and CompletionStage"
                + " (the lock is held until it completes), with reactor-core Mono and Flux, and with"
                + " kotlinx-coroutines-reactor Kotlin suspend functions and Kotlin Flow");
    }

    @Test
    void failsOnAsynchronousTypesOtherThanMonoAndFlux() {
        assertFails(ReturnsPublisher.class, ReturnsPublisher.class.getName() + ".run(String): returns"
                + " java.util.concurrent.Flow$Publisher, whose work goes on after the method returns");
        assertFails(ReturnsStreamsPublisher.class, ReturnsStreamsPublisher.class.getName() + ".run(String): returns"
                + " org.reactivestreams.Publisher, whose work goes on after the method returns");
    }

    /**
     * Spring MVC runs a returned Callable or WebAsyncTask later, on its task executor, and completes a DeferredResult
     * whenever someone sets its result: after the method returned and released the lock.
     */
    @Test
    void failsOnSpringMvcsAsynchronousReturnTypes() {
        assertFails(ReturnsCallable.class, ReturnsCallable.class.getName() + ".run(String): returns"
                + " java.util.concurrent.Callable, whose work goes on after the method returns");
        assertFails(ReturnsDeferredResult.class, ReturnsDeferredResult.class.getName() + ".run(String): returns"
                + " org.springframework.web.context.request.async.DeferredResult, whose work goes on after the method"
                + " returns");
        assertFails(ReturnsWebAsyncTask.class, ReturnsWebAsyncTask.class.getName() + ".run(String): returns"
                + " org.springframework.web.context.request.async.WebAsyncTask, whose work goes on after the method"
                + " returns");
    }

    /** Spring MVC and WebFlux stream a ResponseEntity's body as they would the body itself, after the return. */
    @Test
    void failsOnAResponseEntityOfAnAsynchronousBody() {
        assertFails(ReturnsEntityOfFlux.class, ReturnsEntityOfFlux.class.getName() + ".run(String): returns"
                + " org.springframework.http.ResponseEntity of reactor.core.publisher.Flux, whose work goes on after"
                + " the method returns");
        assertFails(ReturnsEntityOfDeferredResult.class, "returns org.springframework.http.ResponseEntity of"
                + " org.springframework.web.context.request.async.DeferredResult, whose work goes on");
        assertFails(ReturnsMonoOfEntityOfFlux.class, "returns Mono of org.springframework.http.ResponseEntity of"
                + " reactor.core.publisher.Flux, whose work goes on");
        assertFails(ReturnsFutureOfEntityOfFlux.class, "returns CompletableFuture of"
                + " org.springframework.http.ResponseEntity of reactor.core.publisher.Flux, whose work goes on");
    }

    /** Outside a controller a Callable is a value like any other: a job prepared under the lock, say. */
    @Test
    void startsWithAServiceReturningAValueThatIsACallable() {
        contextRunner.withBean(PreparesJobs.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(PreparesJobs.class).prepare("job-1").call()).isEqualTo("job-1");
        });
    }

    @Test
    void failsOnCompletableFutureSubclass() {
        assertFails(ReturnsFutureSubclass.class, "returns " + MyFuture.class.getName());
    }

    @Test
    void listsEveryBadMethod() {
        contextRunner.withBean(BadSyntax.class).withBean(BadWait.class).run(context -> assertThat(context)
                .getFailure().isInstanceOf(QueueLockedConfigurationException.class)
                .hasMessageStartingWith("2 @QueueLocked methods are declared wrongly:")
                .hasMessageContaining(BadSyntax.class.getName()).hasMessageContaining(BadWait.class.getName()));
    }

    /** A JDK proxy calls a final method through its interface: it is locked, so no warning says otherwise. */
    @Test
    void aFinalMethodOfAJdkProxiedBeanIsLockedWithoutAWarning(CapturedOutput output) {
        contextRunner.withPropertyValues("spring.aop.proxy-target-class=false").withBean(FinalPayments.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Settlement settlement = context.getBean(Settlement.class);
                    assertThat(Proxy.isProxyClass(settlement.getClass())).isTrue();
                    assertThat(settlement.settle("o-7", context.getBean(LockTemplate.class))).containsExactly("o-7");
                });
        assertThat(output).doesNotContain(FinalPayments.class.getName() + ".settle(String, LockTemplate) has no"
                + " effect");
    }

    /**
     * A bean in a circular reference is proxied early, for the bean that needed it: the JDK proxy is the bean, and it
     * calls the final method through its interface, locked, so no warning says otherwise.
     */
    @Test
    void aFinalMethodOfAJdkProxiedBeanInACircularReferenceIsLockedWithoutAWarning(CapturedOutput output) {
        contextRunner.withPropertyValues("spring.aop.proxy-target-class=false").withAllowCircularReferences(true)
                .withBean("payments", CyclicPayments.class).withBean(PaymentsPartner.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Settlement settlement = context.getBean(PaymentsPartner.class).settlement;
                    assertThat(Proxy.isProxyClass(settlement.getClass())).isTrue();
                    assertThat(settlement.settle("o-10", context.getBean(LockTemplate.class)))
                            .containsExactly("o-10");
                });
        assertThat(output).doesNotContain(CyclicPayments.class.getName() + ".settle(String, LockTemplate) does not"
                + " work");
    }

    /**
     * A lazy bean is not created at the start, so whether its proxy is the JDK's (called through its interface, final
     * methods included) is known only when it is: the start does not warn, and the creation warns only of a proxy
     * that cannot override the method.
     */
    @Test
    void aFinalMethodOfALazyBeanIsWarnedAboutOnlyIfItsProxyCannotOverrideIt(CapturedOutput output) {
        String warning = FinalPayments.class.getName() + ".settle(String, LockTemplate) does not work";
        contextRunner.withPropertyValues("spring.aop.proxy-target-class=false").withBean(FinalPayments.class)
                .withInitializer(context -> context.addBeanFactoryPostProcessor(
                        new LazyInitializationBeanFactoryPostProcessor()))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Settlement settlement = context.getBean(Settlement.class);
                    assertThat(Proxy.isProxyClass(settlement.getClass())).isTrue();
                    assertThat(settlement.settle("o-8", context.getBean(LockTemplate.class))).containsExactly("o-8");
                });
        assertThat(output).doesNotContain(warning);
        contextRunner.withBean(FinalPayments.class)
                .withInitializer(context -> context.addBeanFactoryPostProcessor(
                        new LazyInitializationBeanFactoryPostProcessor()))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(output).doesNotContain(warning);
                    context.getBean(FinalPayments.class);
                    assertThat(output).contains(warning);
                });
    }

    /**
     * A lazy bean of the class coming first does not hide an eager one created at the start as a class-based proxy:
     * its final method is warned about then, whatever the order of their definitions.
     */
    @Test
    void aFinalMethodOfAnEagerBeanIsWarnedAboutAtTheStartThoughALazyBeanOfItsClassComesFirst(CapturedOutput output) {
        String warning = FinalPayments.class.getName() + ".settle(String, LockTemplate) does not work";
        contextRunner
                .withBean("lazyPayments", FinalPayments.class, FinalPayments::new,
                        definition -> definition.setLazyInit(true))
                .withBean("eagerPayments", FinalPayments.class, FinalPayments::new)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBeanFactory().containsSingleton("lazyPayments")).isFalse();
                    assertThat(output).contains(warning);
                });
    }

    /**
     * Spring MVC runs a Callable a controller returns, also through Object, after the method returned: as the start
     * refuses one declared, the call fails, the lock released, rather than let it run unlocked.
     */
    @Test
    void failsACallableReturnedThroughObjectByAController() {
        contextRunner.withBean(CallableThroughObject.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThatIllegalStateException()
                    .isThrownBy(() -> context.getBean(CallableThroughObject.class).run("callable-1"))
                    .withMessageContaining(CallableThroughObject.class.getName() + ".run(String) returned a ");
            assertThat(context.getBean(LockTemplate.class).activeLocks()).isEmpty();
        });
    }

    @Test
    void warnsWithoutFailingOnMethodsAProxyCannotIntercept(CapturedOutput output) {
        contextRunner.withBean(Unproxyable.class).run(context -> assertThat(context).hasNotFailed());
        assertThat(output).contains("@QueueLocked on " + Unproxyable.class.getName() + ".hidden(String) has no effect:"
                + " a Spring proxy cannot intercept a private method")
                .contains(Unproxyable.class.getName() + ".fixed(String) does not work: a class-based proxy cannot"
                        + " override a final method, so a call through the bean runs it on the proxy instance, whose"
                        + " fields were never set (a NullPointerException at the first injected field it uses), and"
                        + " without the lock; make it not final (open in Kotlin)");
    }

    /**
     * A lazy bean whose @Bean method returns an interface: its class is known only once it is created (as with
     * spring.main.lazy-initialization=true), so its declarations are checked then, with the start-up check's message.
     */
    @Test
    void checksALazyBeanOfAnInterfaceTypeWhenItIsCreated() {
        contextRunner.withUserConfiguration(LazyBadOrdersConfiguration.class)
                .withInitializer(context -> context.addBeanFactoryPostProcessor(
                        new LazyInitializationBeanFactoryPostProcessor()))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThatExceptionOfType(BeanCreationException.class)
                            .isThrownBy(() -> context.getBean(Saving.class))
                            .havingRootCause().isInstanceOf(QueueLockedConfigurationException.class)
                            .withMessageContaining("@QueueLocked on " + BadSaving.class.getName() + ".save(String):"
                                    + " entity expression '#orderid' refers to #orderid, which is not a parameter of"
                                    + " the method; parameters are [orderId]");
                });
    }

    @Test
    void checksTheProductOfAFactoryBeanNotTheFactory() {
        assertFails(BadSyntaxFactory.class, "@QueueLocked on " + BadSyntax.class.getName() + ".run(String):");
    }

    /**
     * A composed annotation that may go on a class carries @QueueLocked there, where no method is locked by it:
     * the start stops rather than let every call run unlocked.
     */
    /**
     * A class type variable is what the bean's class makes of it: a ResponseEntity of R where the class gives Flux is
     * a ResponseEntity of Flux, whose body is streamed after the release.
     */
    @Test
    void failsOnAResponseEntityOfAnAsynchronousBodyThroughAClassTypeVariable() {
        assertFails(FluxStreaming.class, FluxStreaming.class.getName() + ".stream(String): returns"
                + " org.springframework.http.ResponseEntity of reactor.core.publisher.Flux, whose work goes on after"
                + " the method returns");
    }

    /**
     * A class type variable the bean's class resolves to Mono is a Mono: the lock follows it, as a declared one's
     * (it was taken for an unknown type, passed the start, and every call failed).
     */
    @Test
    void aClassTypeVariableTheBeanResolvesToMonoIsFollowedAsAMono() {
        contextRunner.withBean(MonoHandler.class).run(context -> {
            assertThat(context).hasNotFailed();
            LockTemplate locks = context.getBean(LockTemplate.class);
            Mono<List<String>> held = context.getBean(MonoHandler.class).handle("h-1");
            assertThat(locks.activeLocks()).as("nothing locked before the subscription").isEmpty();
            assertThat(held.block(Duration.ofSeconds(30))).containsExactly("h-1");
            assertThat(locks.activeLocks()).isEmpty();
        });
    }

    /**
     * A class type variable the bean's class makes a Future is judged as a declared Future: the start fails, though a
     * CompletableFuture returned through an unresolved type variable is followed at the call.
     */
    @Test
    void failsOnAClassTypeVariableTheBeanResolvesToFuture() {
        assertFails(FutureJobs.class, FutureJobs.class.getName() + ".start(String): returns"
                + " java.util.concurrent.Future, whose work goes on after the method returns");
    }

    /** onWaitTimeout = SKIP needs nothing to return: R that the bean's class makes Void returns nothing. */
    @Test
    void skipsWithAClassTypeVariableTheBeanResolvesToVoid() {
        contextRunner.withBean(VoidHandler.class).run(context -> assertThat(context).hasNotFailed());
    }

    /** A Kotlin Job, as a Deferred (a Job too), runs after the method returned: the lock would not cover it. */
    @Test
    void failsOnAKotlinJob() {
        assertFails(ReturnsJob.class, ReturnsJob.class.getName() + ".start(String): returns kotlinx.coroutines.Job,"
                + " whose work goes on after the method returns");
        assertFails(ReturnsJob.class, "launch the coroutine inside the method and join it, or make the method a"
                + " suspend function");
    }

    @Test
    void failsOnQueueLockedCarriedOntoAClass() {
        assertFails(LockedClass.class, LockedClass.class.getName() + " carries @QueueLocked through @"
                + LockedType.class.getSimpleName() + " on the class, where it locks nothing: @QueueLocked applies to"
                + " methods; put it (or the composed annotation) on each method to lock");
    }

    private void assertFails(Class<?> bean, String message, String... properties) {
        contextRunner.withPropertyValues(properties).withBean(bean).run(context -> assertThat(context).getFailure()
                .isInstanceOf(QueueLockedConfigurationException.class).hasMessageContaining(message));
    }

    @Target({ElementType.TYPE, ElementType.METHOD})
    @Retention(RetentionPolicy.RUNTIME)
    @QueueLocked(entity = "#id")
    public @interface LockedType {
    }

    @LockedType
    public static class LockedClass {

        public void run(String id) {
        }
    }

    public static class WithLeaseAndNamespace {

        @QueueLocked(entity = "#id", lease = "2m", namespace = "billing")
        public void run(String id) {
        }
    }

    public static class Plain {

        @QueueLocked(entity = "#id")
        public void run(String id) {
        }
    }

    public static class Valid {

        @QueueLocked(entity = "#id + #p1 + #a1 + #root.args[0] + #root.methodName", namespace = "n",
                maxWait = "${orders.wait}", lease = "2m")
        public void run(String id, int n) {
        }

        @QueueLocked(entity = "#id", maxWait = "infinite")
        public CompletionStage<String> stage(String id) {
            return CompletableFuture.completedFuture(id);
        }

        @QueueLocked(entity = "'constant'", maxWait = "0")
        public void constant() {
        }

        @QueueLocked(entity = "'job'", maxWait = "0", onWaitTimeout = WaitTimeoutPolicy.SKIP, minHold = "${orders.wait}")
        public void job() {
        }

        @QueueLocked(entity = "'async-job'", maxWait = "0", onWaitTimeout = WaitTimeoutPolicy.SKIP)
        public CompletableFuture<Void> asyncJob() {
            return CompletableFuture.completedFuture(null);
        }

        @QueueLocked(entity = {"#from", "#to"}, mode = LockMode.SHARED)
        public void transfer(String from, String to) {
        }

        @QueueLocked(entity = "#ids", permits = 5)
        public void each(java.util.List<String> ids) {
        }

        @QueueLocked(entity = "#key")
        public void keyed(OrderKey key) {
        }

        @QueueLocked(entity = "#ref.id")
        public void byId(OrderRef ref) {
        }
    }

    public static class PastTheLastParameter {

        @QueueLocked(entity = "#p1")
        public void run(String orderId) {
        }
    }

    public static class OrderKeys {

        public String of(String id) {
            return "order-" + id;
        }
    }

    public static class DottedBeanUser {

        @QueueLocked(entity = "@'order.keys'.of(#orderId)")
        public String run(String orderId) {
            return "ran " + orderId;
        }
    }

    public static class NoParameters {

        @QueueLocked(entity = "#a0")
        public void run() {
        }
    }

    public static class UnknownBean {

        @QueueLocked(entity = "@orderKeyz.of(#orderId)")
        public void run(String orderId) {
        }
    }

    /** An order as a request body gives it: a new instance per call, without a toString(). */
    public static class OrderRef {

        private final String id;

        public OrderRef(String id) {
            this.id = id;
        }

        public String getId() {
            return id;
        }
    }

    public static class IdentityEntity {

        @QueueLocked(entity = "#order")
        public void update(OrderRef order) {
        }
    }

    public static class OptionalIdentityEntity {

        @QueueLocked(entity = "#order")
        public void update(Optional<OrderRef> order) {
        }
    }

    /** An entity whose type has a toString() of its own, as a record has. */
    public record OrderKey(String id) {
    }

    public static class RecordTypo {

        @QueueLocked(entity = "#key.idd")
        public void run(OrderKey key) {
        }
    }

    /** A final class with a property of each kind SpEL reads: a getter, a boolean getter and a public field. */
    public static final class Sku {

        public final String region = "eu";

        public String getCode() {
            return "sku-1";
        }

        public boolean isActive() {
            return true;
        }
    }

    public static class FinalClassTypo {

        @QueueLocked(entity = "#sku.cod")
        public void run(Sku sku) {
        }
    }

    public static class NonFinalClassPath {

        @QueueLocked(entity = "#ref.idd")
        public void run(OrderRef ref) {
        }
    }

    public static class MapPath {

        @QueueLocked(entity = "#attributes.tenant")
        public void run(java.util.Map<String, String> attributes) {
        }
    }

    public static class ReadablePaths {

        @QueueLocked(entity = "#key.id")
        public void component(OrderKey key) {
        }

        @QueueLocked(entity = {"#sku.code", "#sku.active", "#p0.region", "#sku.code.bytes"})
        public void members(Sku sku) {
        }
    }

    public record Party(String name) {
    }

    public record Shipment(OrderRef order, Party party) {
    }

    public record Delivery(Shipment shipment) {
    }

    public record Envelope<T>(T body) {
    }

    public static class SafePath {

        @QueueLocked(entity = "#shipment?.party?.name")
        public void run(Shipment shipment) {
        }
    }

    public static class SafePathTypo {

        @QueueLocked(entity = "#shipment?.party?.nme")
        public void run(Shipment shipment) {
        }
    }

    public static class GenericPathTypo {

        @QueueLocked(entity = "#envelope.body.idd")
        public void run(Envelope<OrderKey> envelope) {
        }
    }

    public static class IdentityPath {

        @QueueLocked(entity = "#p0.shipment.order")
        public void update(Delivery delivery) {
        }
    }

    /** A cart whose owner is known by an interface only. */
    public static class Cart {

        public CharSequence getOwner() {
            return "ann";
        }
    }

    public static class InterfacePath {

        @QueueLocked(entity = {"#cart.owner", "#cart.owner.nickname"})
        public void run(Cart cart) {
        }
    }

    /** Its parameter is called root; SpEL's {@code #root} is still the root object. */
    public static class RootNamedParameter {

        public String getTenant() {
            return "tenant-1";
        }

        @QueueLocked(entity = "#root.target.tenant")
        public String rebuild(String root) {
            return "rebuilt " + root;
        }

        @QueueLocked(entity = "#root.args[0]")
        public String reload(String root) {
            return "reloaded " + root;
        }
    }

    public record Wrapper<T>(Envelope<T> inner) {
    }

    public record Batch<T>(T[] items) {
    }

    public static class LowerBoundedWildcard {

        @QueueLocked(entity = "#envelope.body.id")
        public String handle(Envelope<? super Integer> envelope) {
            return "handled";
        }

        @QueueLocked(entity = "#wrapper.inner.body.id")
        public String wrapped(Wrapper<? super Integer> wrapper) {
            return "wrapped";
        }

        @QueueLocked(entity = "#keys")
        public String each(List<? super CompletableFuture<String>> keys) {
            return "each";
        }

        @QueueLocked(entity = "#batch.items")
        public String batch(Batch<? super CompletableFuture<String>> batch) {
            return "batch";
        }
    }

    /** A final class whose generic method's type variable has the class's variable's name. */
    public static final class Cache<T> {

        private final T value;
        private final Object cached;

        public Cache(T value, Object cached) {
            this.value = value;
            this.cached = cached;
        }

        public T getValue() {
            return value;
        }

        @SuppressWarnings({"unchecked", "TypeParameterHidesVisibleType"})
        public <T> T getCached() {
            return (T) cached;
        }
    }

    public static class ShadowedTypeVariable {

        @QueueLocked(entity = "#cache.cached.id")
        public String handle(Cache<Integer> cache) {
            return "handled";
        }
    }

    public abstract static class Handler<T> {

        @SuppressWarnings("TypeParameterHidesVisibleType")
        @QueueLocked(entity = "#item.id")
        public <T> String handle(T item) {
            return "handled";
        }
    }

    public static class IntegerHandler extends Handler<Integer> {
    }

    public static class Box<T> {

        public T getContent() {
            return null;
        }
    }

    public static final class KeyBox extends Box<OrderKey> {
    }

    public record Numbered<T extends Integer>(T number) {
    }

    public static final class Counter {

        public <N extends Integer> N getCount() {
            return null;
        }
    }

    public static class CertainGenericTypos {

        @QueueLocked(entity = "#box.content.idd")
        public void inherited(KeyBox box) {
        }

        @QueueLocked(entity = "#envelope.body.idd")
        public void upperBounded(Envelope<? extends OrderKey> envelope) {
        }

        @SuppressWarnings("rawtypes")
        @QueueLocked(entity = "#numbered.number.idd")
        public void raw(Numbered numbered) {
        }

        @QueueLocked(entity = "#counter.count.idd")
        public void methodVariable(Counter counter) {
        }
    }

    public static class PositionalNamedParameter {

        @QueueLocked(entity = "#p1.code")
        public String run(OrderKey p1, Sku sku) {
            return "ran";
        }
    }

    public static class BadSyntax {

        @QueueLocked(entity = "#id +")
        public void run(String id) {
        }
    }

    public static class BadSyntaxFactory implements FactoryBean<BadSyntax> {

        @Override
        public BadSyntax getObject() {
            return new BadSyntax();
        }

        @Override
        public Class<?> getObjectType() {
            return BadSyntax.class;
        }
    }

    public static class UnknownParameter {

        @QueueLocked(entity = "#orderid")
        public void run(String orderId, int quantity) {
        }
    }

    @Target(ElementType.METHOD)
    @Retention(RetentionPolicy.RUNTIME)
    @QueueLocked(entity = "'order-' + #id", namespace = "orders")
    public @interface OrderLocked {
    }

    @Target(ElementType.METHOD)
    @Retention(RetentionPolicy.RUNTIME)
    @QueueLocked(entity = "'bill-' + #id", namespace = "billing")
    public @interface BillLocked {
    }

    public interface Bills {

        @QueueLocked(entity = "'bill-' + #id", namespace = "billing")
        void run(String id, Runnable body);
    }

    public interface Orders {

        @QueueLocked(entity = "'order-' + #id", namespace = "orders")
        void run(String id, Runnable body);
    }

    public interface MoreBills extends Bills {
    }

    public static class Runner {

        public void run(String id, Runnable body) {
            body.run();
        }
    }

    public static class InheritedBill extends Runner implements Bills {
    }

    public interface StaticLock {

        @QueueLocked(entity = "#id")
        static void run(String id, Runnable body) {
            body.run();
        }
    }

    public static class StaticNamesake implements StaticLock {

        public void run(String id, Runnable body) {
            body.run();
        }
    }

    public static class OwnRunner {

        @QueueLocked(entity = "'own-' + #id")
        public void run(String id, Runnable body) {
            body.run();
        }
    }

    public static class OwnInheritedBill extends OwnRunner implements Bills {
    }

    public static class OrderAndBill implements Orders, Bills {

        @Override
        public void run(String id, Runnable body) {
            body.run();
        }
    }

    public static class OverridingBill implements Bills {

        @Override
        @QueueLocked(entity = "'own-' + #id")
        public void run(String id, Runnable body) {
            body.run();
        }
    }

    public static class TwiceTheSameBill implements Bills, MoreBills {

        @Override
        public void run(String id, Runnable body) {
            body.run();
        }
    }

    public static class TwoLocks {

        @OrderLocked
        @BillLocked
        public void run(String id) {
        }
    }

    public static class LockedTwiceDirectly {

        @QueueLocked(entity = "#id")
        @BillLocked
        public void run(String id) {
        }
    }

    public static class UnitlessLease {

        @QueueLocked(entity = "#id", lease = "60", maxWait = "0")
        public void run(String id) {
        }
    }

    public static class EmptyEntity {

        @QueueLocked(entity = " ")
        public void run(String id) {
        }
    }

    public static class NoEntities {

        @QueueLocked(entity = {})
        public void run(String id) {
        }
    }

    public static class OneBadOfTwo {

        @QueueLocked(entity = {"#from", "#too"})
        public void run(String from, String to) {
        }
    }

    public static class NoPermits {

        @QueueLocked(entity = "#id", permits = 0)
        public void run(String id) {
        }
    }

    public static class SharedSemaphore {

        @QueueLocked(entity = "#id", mode = LockMode.SHARED, permits = 3)
        public void run(String id) {
        }
    }

    public static class BadWait {

        @QueueLocked(entity = "#id", maxWait = "soon")
        public void run(String id) {
        }
    }

    public static class EndlessMinHold {

        @QueueLocked(entity = "#id", minHold = "110000d")
        public void run(String id) {
        }
    }

    public interface Settlement {

        List<String> settle(String orderId, LockTemplate locks);
    }

    public static class FinalPayments implements Settlement {

        @Override
        @QueueLocked(entity = "#orderId")
        public final List<String> settle(String orderId, LockTemplate locks) {
            return locks.activeLocks().stream().map(lock -> lock.entity()).toList();
        }
    }

    /** A {@link FinalPayments} in a circular reference with {@link PaymentsPartner}. */
    public static class CyclicPayments implements Settlement {

        @Autowired
        PaymentsPartner partner;

        @Override
        @QueueLocked(entity = "#orderId")
        public final List<String> settle(String orderId, LockTemplate locks) {
            return locks.activeLocks().stream().map(lock -> lock.entity()).toList();
        }
    }

    public static class PaymentsPartner {

        @Autowired
        Settlement settlement;
    }

    public interface Payments {

        @QueueLocked(entity = "#orderId")
        String pay(String orderId);
    }

    public static class NegativeWait {

        @QueueLocked(entity = "#id", maxWait = "-1s")
        public void run(String id) {
        }
    }

    public static class SkipWithResult {

        @QueueLocked(entity = "#id", maxWait = "0", onWaitTimeout = WaitTimeoutPolicy.SKIP)
        public CompletableFuture<String> run(String id) {
            return CompletableFuture.completedFuture(id);
        }
    }

    public static class ZeroMinHold {

        @QueueLocked(entity = "#id", minHold = "0s")
        public void run(String id) {
        }
    }

    public static class PlaceholderWait {

        @QueueLocked(entity = "#id", maxWait = "${orders.name}")
        public void run(String id) {
        }
    }

    public static class BadLease {

        @QueueLocked(entity = "#id", lease = "infinite")
        public void run(String id) {
        }
    }

    public static class ManyPermits {

        @QueueLocked(entity = "#id", permits = 101)
        public void run(String id) {
        }
    }

    public static class ShortLease {

        @QueueLocked(entity = "#id", lease = "5s")
        public void run(String id) {
        }
    }

    public static class EndlessLease {

        @QueueLocked(entity = "#id", lease = "400d")
        public void run(String id) {
        }
    }

    public static class LongNamespace {

        @QueueLocked(entity = "#id", namespace = LONG_NAMESPACE)
        public void run(String id) {
        }
    }

    static final String N32 = "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn";
    static final String N256 = N32 + N32 + N32 + N32 + N32 + N32 + N32 + N32;
    /** One byte more than DynamoDB takes in a sort key (1024). */
    static final String LONG_NAMESPACE = N256 + N256 + N256 + N256 + "n";

    public static class ReturnsFuture {

        @QueueLocked(entity = "#id")
        public Future<String> run(String id) {
            return CompletableFuture.completedFuture(id);
        }
    }

    public static class ReturnsStreamsPublisher {

        @QueueLocked(entity = "#id")
        public org.reactivestreams.Publisher<String> run(String id) {
            return Mono.just(id);
        }
    }

    @Controller
    public static class CallableThroughObject {

        @QueueLocked(entity = "#id")
        public Object run(String id) {
            return (Callable<String>) () -> id;
        }
    }

    @Controller
    public static class ReturnsCallable {

        @QueueLocked(entity = "#id")
        public Callable<String> run(String id) {
            return () -> id;
        }
    }

    public static class ReturnsEntityOfFlux {

        @QueueLocked(entity = "#id")
        public ResponseEntity<Flux<String>> run(String id) {
            return ResponseEntity.ok(Flux.just(id));
        }
    }

    public static class ReturnsMonoOfEntityOfFlux {

        @QueueLocked(entity = "#id")
        public Mono<ResponseEntity<Flux<String>>> run(String id) {
            return Mono.just(ResponseEntity.ok(Flux.just(id)));
        }
    }

    public static class ReturnsFutureOfEntityOfFlux {

        @QueueLocked(entity = "#id")
        public CompletableFuture<ResponseEntity<Flux<String>>> run(String id) {
            return CompletableFuture.completedFuture(ResponseEntity.ok(Flux.just(id)));
        }
    }

    public abstract static class Streaming<B> {

        @QueueLocked(entity = "#id")
        public ResponseEntity<B> stream(String id) {
            return ResponseEntity.ok(body(id));
        }

        protected abstract B body(String id);
    }

    public static class FluxStreaming extends Streaming<Flux<String>> {

        @Override
        protected Flux<String> body(String id) {
            return Flux.just(id);
        }
    }

    public abstract static class ResultHandler<R> {

        @QueueLocked(entity = "#id")
        public R handle(String id) {
            return make(id);
        }

        protected abstract R make(String id);
    }

    public static class MonoHandler extends ResultHandler<Mono<List<String>>> {

        private final LockTemplate locks;

        public MonoHandler(LockTemplate locks) {
            this.locks = locks;
        }

        /** The entities held while the Mono runs. */
        @Override
        protected Mono<List<String>> make(String id) {
            return Mono.fromCallable(() -> locks.activeLocks().stream().map(LockInfo::entity).toList());
        }
    }

    public abstract static class Jobs<R> {

        @QueueLocked(entity = "#id")
        public R start(String id) {
            return work(id);
        }

        protected abstract R work(String id);
    }

    public static class FutureJobs extends Jobs<Future<String>> {

        @Override
        protected Future<String> work(String id) {
            return CompletableFuture.completedFuture("done " + id);
        }
    }

    public abstract static class SkippingHandler<R> {

        @QueueLocked(entity = "#id", maxWait = "0", onWaitTimeout = WaitTimeoutPolicy.SKIP)
        public R handle(String id) {
            return null;
        }
    }

    public static class VoidHandler extends SkippingHandler<Void> {
    }

    public static class ReturnsJob {

        @QueueLocked(entity = "#id")
        public kotlinx.coroutines.Job start(String id) {
            return JobKt.Job(null);
        }
    }

    public static class ReturnsEntityOfDeferredResult {

        @QueueLocked(entity = "#id")
        public ResponseEntity<DeferredResult<String>> run(String id) {
            return ResponseEntity.ok(new DeferredResult<>());
        }
    }

    public record PreparedJob(String id) implements Callable<String> {

        @Override
        public String call() {
            return id;
        }
    }

    public static class PreparesJobs {

        @QueueLocked(entity = "#id")
        public PreparedJob prepare(String id) {
            return new PreparedJob(id);
        }
    }

    public static class ReturnsDeferredResult {

        @QueueLocked(entity = "#id")
        public DeferredResult<String> run(String id) {
            return new DeferredResult<>();
        }
    }

    public static class ReturnsWebAsyncTask {

        @QueueLocked(entity = "#id")
        public WebAsyncTask<String> run(String id) {
            return new WebAsyncTask<>(() -> id);
        }
    }

    public static class ReturnsPublisher {

        @QueueLocked(entity = "#id")
        public Flow.Publisher<String> run(String id) {
            return null;
        }
    }

    public static class MyFuture<T> extends CompletableFuture<T> {
    }

    public static class ReturnsFutureSubclass {

        @QueueLocked(entity = "#id")
        public MyFuture<String> run(String id) {
            return new MyFuture<>();
        }
    }

    public interface Saving {

        void save(String orderId);
    }

    public static class BadSaving implements Saving {

        @Override
        @QueueLocked(entity = "#orderid")
        public void save(String orderId) {
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class LazyBadOrdersConfiguration {

        @Bean
        Saving saving() {
            return new BadSaving();
        }
    }

    public static class Unproxyable {

        @QueueLocked(entity = "#id")
        private void hidden(String id) {
        }

        @QueueLocked(entity = "#id")
        public final void fixed(String id) {
        }

        public void use() {
            hidden("x");
        }
    }
}
