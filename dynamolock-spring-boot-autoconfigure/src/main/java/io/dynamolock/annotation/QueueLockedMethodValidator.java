package io.dynamolock.annotation;

import io.dynamolock.core.LockTemplate;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.Advisor;
import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.NoUniqueBeanDefinitionException;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.util.ClassUtils;

/**
 * Checks every {@link QueueLocked} method of the application's beans once all singletons
 * exist, and stops the start with one {@link QueueLockedConfigurationException} listing
 * every bad method. Warns, without failing, about methods a proxy cannot intercept
 * (private, final, static), and about a transaction advisor that would run outside the
 * lock advisor. Looks the advisor's {@code LockTemplate} up, so that no call has to, and stops the start
 * if there are several and none is {@code @Primary}: no call could lock.
 * <p>
 * A bean created after the start (a lazy one, with {@code spring.main.lazy-initialization=true} every one) may be of
 * a class the start could not know: its {@code @Bean} method returns an interface. Its class is checked when the bean
 * is created, a bad declaration failing that creation with the same message, and the template made to outlive it.
 * A {@code FactoryBean}'s product is judged by its own class and proxy, as it was made, at the start or later, not by
 * the factory's object type; a bean that is an AOP proxy also by each interface it proxies that its target does not
 * implement (a Spring Data repository's, whose target is a {@code SimpleJpaRepository}).
 * As a post-processor it is created before the other beans: it is no candidate for auto-proxying (which would look
 * every advisor up then) and asks for its advisor only once the singletons exist.
 */
public class QueueLockedMethodValidator implements SmartInitializingSingleton, BeanFactoryAware, BeanPostProcessor,
        AopInfrastructureBean {

    private static final Logger log = LoggerFactory.getLogger(QueueLockedMethodValidator.class);

    static final String TRANSACTION_INTERCEPTOR =
            "org.springframework.transaction.interceptor.TransactionInterceptor";

    /** Asked for once the singletons exist: created with the post-processors, the advisor would miss some. */
    private final Supplier<QueueLockedAdvisor> advisor;
    private ListableBeanFactory beanFactory;
    /** The classes checked, each with whether it has {@code @QueueLocked} methods; lazy beans are created at will. */
    private final Map<Class<?>, Boolean> checked = new ConcurrentHashMap<>();
    /**
     * Classes with final {@code @QueueLocked} methods checked before a bean of theirs was created (a lazy one): warned
     * of once one is created that cannot run them through its proxy, at the start or later.
     */
    private final Set<Class<?>> finalsUnseen = ConcurrentHashMap.newKeySet();
    /**
     * The beans created before the start-up check, as post-processed (their proxies), by name, kept until it is done:
     * asked for a FactoryBean's product, and a bean registered as no singleton. A FactoryBean's product is
     * post-processed under the factory's name, and only this shows its class and proxy: the factory's declared object
     * type may be an interface, and the singleton of that name is the factory itself.
     */
    private final Map<String, Object> createdBeforeTheCheck = new ConcurrentHashMap<>();
    /** Whether the start-up check is done: the beans created since are checked one by one. */
    private volatile boolean started;

    public QueueLockedMethodValidator(QueueLockedAdvisor advisor) {
        this(() -> advisor);
    }

    /**
     * @param advisor the advisor whose methods are checked, asked for only once the singletons exist: this
     *                validator is a bean post-processor, created before them
     */
    public QueueLockedMethodValidator(Supplier<QueueLockedAdvisor> advisor) {
        this.advisor = advisor;
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = (ListableBeanFactory) beanFactory;
    }

    @Override
    public void afterSingletonsInstantiated() {
        try {
            checkAtStart();
        }
        finally {
            started = true;
            createdBeforeTheCheck.clear();
        }
    }

    private void checkAtStart() {
        List<String> problems = new ArrayList<>();
        List<String> locking = new ArrayList<>();
        for (String name : beanFactory.getBeanDefinitionNames()) {
            Object bean = createdBean(name);
            List<Class<?>> types = bean != null ? CalledTypes.of(bean) : declaredClass(name);
            boolean locks = false;
            for (Class<?> type : types) {
                if (!AnnotationUtils.isCandidateClass(type, QueueLocked.class)) {
                    continue;
                }
                if (!checked.containsKey(type)) {
                    checkClass(type, problems);
                    checked.put(type, check(type, bean, problems));
                }
                else {
                    // Checked under a name whose bean is not created (a lazy one): this one may be, and broken already.
                    warnOfFinals(type, bean);
                }
                locks |= checked.get(type);
            }
            if (locks) {
                locking.add(name);
            }
        }
        boolean found = !locking.isEmpty();
        if (found) {
            lookUpBeans(); // first: without one template, the leases and namespaces above could not be checked
            outliveLockingBeans(locking);
        }
        failOn(problems);
        if (found) {
            warnIfTransactionsRunOutside();
        }
    }

    /**
     * Before the start-up check, remembers the bean for it: the check sees every bean created by then. After it, a
     * bean of a class not yet checked (a lazy bean whose {@code @Bean} method returns an interface) is checked now, as
     * the start would have.
     */
    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (!started && beanName != null && !(bean instanceof FactoryBean)) {
            // A FactoryBean is post-processed under its product's name too: the product, made later if at all, counts.
            createdBeforeTheCheck.put(beanName, bean);
        }
        if (!started && finalsUnseen.isEmpty()) {
            return bean;
        }
        boolean locks = false;
        for (Class<?> type : CalledTypes.of(bean)) {
            // Also during the start-up check: a lazy bean it creates (an advisor it looks up) is past its class's check.
            warnOfFinals(type, bean);
            if (started && AnnotationUtils.isCandidateClass(type, QueueLocked.class)) {
                locks |= checkCreatedLater(type, bean);
            }
        }
        if (locks && beanFactory.containsBean(beanName) && beanFactory.isSingleton(beanName)) {
            outliveLockingBeans(List.of(beanName));
        }
        return bean;
    }

    /** Checks a class first seen after the start, as the start would have; {@code true} if it has locked methods. */
    private boolean checkCreatedLater(Class<?> type, Object bean) {
        Boolean locking = checked.get(type);
        if (locking == null) {
            List<String> problems = new ArrayList<>();
            checkClass(type, problems);
            locking = check(type, bean, problems);
            if (locking) {
                lookUpBeans();
            }
            failOn(problems);
            checked.put(type, locking);
        }
        return locking;
    }

    private static void failOn(List<String> problems) {
        if (!problems.isEmpty()) {
            throw new QueueLockedConfigurationException(problems.size() == 1 ? problems.get(0)
                    : problems.size() + " @QueueLocked methods are declared wrongly:\n - "
                            + String.join("\n - ", problems));
        }
    }

    /**
     * The user class a bean not created yet is declared with (a FactoryBean's object type), without creating it; none
     * if it cannot tell.
     */
    private List<Class<?>> declaredClass(String name) {
        Class<?> type = beanFactory.getType(name, false);
        return type == null ? List.of() : List.of(ClassUtils.getUserClass(type));
    }

    /**
     * A composed annotation whose {@code @Target} allows classes can carry {@code @QueueLocked} onto one, where the
     * advisor, which matches methods, never sees it: every call would run unlocked.
     */
    private static void checkClass(Class<?> type, List<String> problems) {
        MergedAnnotation<QueueLocked> onClass = MergedAnnotations.from(type, SearchStrategy.TYPE_HIERARCHY)
                .get(QueueLocked.class);
        if (onClass.isPresent()) {
            problems.add(type.getName() + " carries @QueueLocked through @" + onClass.getRoot().getType().getSimpleName()
                    + " on the class, where it locks nothing: @QueueLocked applies to methods; put it (or the"
                    + " composed annotation) on each method to lock");
        }
    }

    /**
     * The bean as created (its proxy, if it has one; a FactoryBean's product), or {@code null} if it is not created
     * yet (a lazy one, a product nothing asked for).
     */
    private Object createdBean(String name) {
        Object singleton = beanFactory instanceof ConfigurableListableBeanFactory factory
                && factory.containsSingleton(name) ? factory.getSingleton(name) : null;
        if (singleton != null && !(singleton instanceof FactoryBean)) {
            // The bean as registered, not as this post-processor saw it: one in a circular reference was proxied early,
            // for the bean that needed it, and the auto-proxy creator hands the raw bean on here. Also one created
            // before this post-processor was registered (one another post-processor needed).
            return singleton;
        }
        // A FactoryBean's product (post-processed under the factory's name), or a bean that is no singleton.
        return createdBeforeTheCheck.get(name);
    }

    private static Set<Method> annotatedMethods(Class<?> type) {
        return MethodIntrospector.selectMethods(type, (MethodIntrospector.MetadataLookup<Boolean>) method ->
                QueueLockedDeclarations.of(method, type).isEmpty() ? null : Boolean.TRUE).keySet();
    }

    /**
     * Checks the annotated methods of {@code type}; {@code true} if it has any. {@code bean}, the bean as created, or
     * {@code null} if it is not yet, tells whether its proxy is the JDK's, which calls a final method through its
     * interface: for a bean not created yet, final methods are checked, and warned about once the bean is created.
     */
    private boolean check(Class<?> type, Object bean, List<String> problems) {
        Set<Method> annotated = annotatedMethods(type);
        for (Method method : annotated) {
            int modifiers = method.getModifiers();
            if (Modifier.isPrivate(modifiers) || Modifier.isStatic(modifiers)) {
                log.warn("@QueueLocked on {} has no effect: a Spring proxy cannot intercept a {} method; make it"
                        + " a public or protected instance method", QueueLockedMethods.describe(method, type),
                        Modifier.isPrivate(modifiers) ? "private" : "static");
                continue;
            }
            if (Modifier.isFinal(modifiers) && bean == null) {
                // Which proxy it gets (spring.aop.proxy-target-class, its interfaces, the creator's own rules) is
                // known when it is made: postProcessAfterInitialization sees it.
                finalsUnseen.add(type);
            }
            else if (warnedAsFinal(method, type, bean)) {
                continue;
            }
            try {
                advisor.get().methods().get(method, type);
            }
            catch (QueueLockedConfigurationException ex) {
                problems.add(ex.getMessage());
            }
        }
        return !annotated.isEmpty();
    }

    /**
     * Warns of the final methods of {@code type}, checked before any bean of it was created, that {@code bean} (as
     * created, or {@code null} if it is not yet) cannot run through its proxy: once for the class, as the start does.
     */
    private void warnOfFinals(Class<?> type, Object bean) {
        if (bean != null && finalsUnseen.contains(type)
                && annotatedMethods(type).stream().filter(method -> warnedAsFinal(method, type, bean)).count() > 0) {
            finalsUnseen.remove(type);
        }
    }

    /**
     * Warns of a final method that the bean's proxy cannot override; {@code true} if it did. A JDK proxy calls it
     * through its interface, where it is locked.
     */
    private static boolean warnedAsFinal(Method method, Class<?> type, Object bean) {
        if (!Modifier.isFinal(method.getModifiers()) || AopUtils.isJdkDynamicProxy(bean)
                && ClassUtils.getInterfaceMethodIfPossible(method, type) != method) {
            return false;
        }
        // CGLIB cannot override it, so it runs on the proxy, an instance made without a constructor call.
        log.warn("@QueueLocked on {} does not work: a class-based proxy cannot override a final method, so a call"
                + " through the bean runs it on the proxy instance, whose fields were never set (a"
                + " NullPointerException at the first injected field it uses), and without the lock; make it not"
                + " final (open in Kotlin)", QueueLockedMethods.describe(method, type));
        return true;
    }

    /**
     * Without a template now, the first call looks again and fails there, as it always did. With several and none
     * of them primary, every call would fail: the start does, naming them.
     */
    private void lookUpBeans() {
        try {
            advisor.get().lookUpBeans();
        }
        catch (NoUniqueBeanDefinitionException ex) {
            throw new QueueLockedConfigurationException("@QueueLocked methods need one LockTemplate to lock with, and"
                    + " the context has " + ex.getNumberOfBeansFound() + ", none of them @Primary"
                    + (ex.getBeanNamesFound() == null ? "" : ": " + String.join(", ", ex.getBeanNamesFound()))
                    + ". Mark the one @QueueLocked should use @Primary", ex);
        }
        catch (BeansException ex) {
            log.debug("No LockTemplate at start; the first @QueueLocked call will look it up", ex);
        }
    }

    /**
     * The advisor finds its template only when called, so nothing tells the context that beans with
     * {@code @QueueLocked} methods use it: the template, an auto-configured bean created after them, would be
     * closed before them, and a lock taken in their {@code destroy()} (a flush under the lock) would fail. Each
     * template now outlives them.
     */
    private void outliveLockingBeans(List<String> locking) {
        if (!(beanFactory instanceof ConfigurableListableBeanFactory factory)) {
            return;
        }
        for (String template : factory.getBeanNamesForType(LockTemplate.class, false, false)) {
            for (String bean : locking) {
                factory.registerDependentBean(template, bean);
            }
        }
    }

    private void warnIfTransactionsRunOutside() {
        ClassLoader classLoader = getClass().getClassLoader();
        if (!ClassUtils.isPresent(TRANSACTION_INTERCEPTOR, classLoader)) {
            return;
        }
        Class<?> transactionInterceptor = ClassUtils.resolveClassName(TRANSACTION_INTERCEPTOR, classLoader);
        for (Advisor other : beanFactory.getBeansOfType(Advisor.class, false, false).values()) {
            if (transactionInterceptor.isInstance(other.getAdvice()) && other instanceof Ordered ordered
                    && ordered.getOrder() <= advisor.get().getOrder()) {
                log.warn("The @Transactional advisor has order {} and the @QueueLocked advisor {}: where both"
                        + " apply, the lock is taken inside the transaction and released before it commits, so"
                        + " another caller can read uncommitted state. Set dynamolock.advisor-order below {}",
                        ordered.getOrder(), advisor.get().getOrder(), ordered.getOrder());
            }
        }
    }
}
