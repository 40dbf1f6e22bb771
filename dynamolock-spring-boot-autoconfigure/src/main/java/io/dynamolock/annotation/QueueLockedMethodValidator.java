package io.dynamolock.annotation;

import io.dynamolock.core.LockTemplate;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.Advisor;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.NoUniqueBeanDefinitionException;
import org.springframework.beans.factory.SmartInitializingSingleton;
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
 */
public class QueueLockedMethodValidator implements SmartInitializingSingleton, BeanFactoryAware {

    private static final Logger log = LoggerFactory.getLogger(QueueLockedMethodValidator.class);

    static final String TRANSACTION_INTERCEPTOR =
            "org.springframework.transaction.interceptor.TransactionInterceptor";

    private final QueueLockedAdvisor advisor;
    private ListableBeanFactory beanFactory;

    public QueueLockedMethodValidator(QueueLockedAdvisor advisor) {
        this.advisor = advisor;
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = (ListableBeanFactory) beanFactory;
    }

    @Override
    public void afterSingletonsInstantiated() {
        List<String> problems = new ArrayList<>();
        Map<Class<?>, Boolean> seen = new HashMap<>();
        List<String> locking = new ArrayList<>();
        for (String name : beanFactory.getBeanDefinitionNames()) {
            Class<?> type = beanClass(name);
            if (type == null || !AnnotationUtils.isCandidateClass(type, QueueLocked.class)) {
                continue;
            }
            if (!seen.containsKey(type)) {
                checkClass(type, problems);
                seen.put(type, check(type, isJdkProxy(name), problems));
            }
            if (seen.get(type)) {
                locking.add(name);
            }
        }
        boolean found = !locking.isEmpty();
        if (found) {
            lookUpBeans(); // first: without one template, the leases and namespaces above could not be checked
            outliveLockingBeans(locking);
        }
        if (!problems.isEmpty()) {
            throw new QueueLockedConfigurationException(problems.size() == 1 ? problems.get(0)
                    : problems.size() + " @QueueLocked methods are declared wrongly:\n - "
                            + String.join("\n - ", problems));
        }
        if (found) {
            warnIfTransactionsRunOutside();
        }
    }

    /** The user class behind a bean, without creating beans that do not exist yet. */
    private Class<?> beanClass(String name) {
        if (beanFactory instanceof ConfigurableListableBeanFactory factory && factory.containsSingleton(name)) {
            Object bean = factory.getSingleton(name);
            // A FactoryBean's own instance is registered under the product's name: the product is what is proxied.
            if (bean != null && !(bean instanceof FactoryBean)) {
                return AopProxyUtils.ultimateTargetClass(bean);
            }
        }
        Class<?> type = beanFactory.getType(name, false);
        return type == null ? null : ClassUtils.getUserClass(type);
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

    /** Whether the bean is already a JDK proxy: it is called through its interfaces, final methods included. */
    private boolean isJdkProxy(String name) {
        return beanFactory instanceof ConfigurableListableBeanFactory factory && factory.containsSingleton(name)
                && AopUtils.isJdkDynamicProxy(factory.getSingleton(name));
    }

    /** Checks the annotated methods of {@code type}; {@code true} if it has any. */
    private boolean check(Class<?> type, boolean jdkProxy, List<String> problems) {
        Map<Method, Boolean> annotated = MethodIntrospector.selectMethods(type,
                (MethodIntrospector.MetadataLookup<Boolean>) method ->
                        QueueLockedDeclarations.of(method, type).isEmpty() ? null : Boolean.TRUE);
        for (Method method : annotated.keySet()) {
            int modifiers = method.getModifiers();
            boolean viaInterface = jdkProxy && ClassUtils.getInterfaceMethodIfPossible(method, type) != method;
            if (Modifier.isPrivate(modifiers) || Modifier.isStatic(modifiers)) {
                log.warn("@QueueLocked on {} has no effect: a Spring proxy cannot intercept a {} method; make it"
                        + " a public or protected instance method", QueueLockedMethods.describe(method, type),
                        Modifier.isPrivate(modifiers) ? "private" : "static");
                continue;
            }
            if (Modifier.isFinal(modifiers) && !viaInterface) {
                // CGLIB cannot override it, so it runs on the proxy, an instance made without a constructor call.
                log.warn("@QueueLocked on {} does not work: a class-based proxy cannot override a final method, so a"
                        + " call through the bean runs it on the proxy instance, whose fields were never set (a"
                        + " NullPointerException at the first injected field it uses), and without the lock; make it"
                        + " not final (open in Kotlin)", QueueLockedMethods.describe(method, type));
                continue;
            }
            try {
                advisor.methods().get(method, type);
            }
            catch (QueueLockedConfigurationException ex) {
                problems.add(ex.getMessage());
            }
        }
        return !annotated.isEmpty();
    }

    /**
     * Without a template now, the first call looks again and fails there, as it always did. With several and none
     * of them primary, every call would fail: the start does, naming them.
     */
    private void lookUpBeans() {
        try {
            advisor.lookUpBeans();
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
                    && ordered.getOrder() <= advisor.getOrder()) {
                log.warn("The @Transactional advisor has order {} and the @QueueLocked advisor {}: where both"
                        + " apply, the lock is taken inside the transaction and released before it commits, so"
                        + " another caller can read uncommitted state. Set dynamolock.advisor-order below {}",
                        ordered.getOrder(), advisor.getOrder(), ordered.getOrder());
            }
        }
    }
}
