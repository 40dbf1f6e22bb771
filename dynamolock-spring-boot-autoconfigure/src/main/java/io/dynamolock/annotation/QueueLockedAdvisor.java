package io.dynamolock.annotation;

import io.dynamolock.core.LockTemplate;
import java.lang.reflect.Method;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.aopalliance.aop.Advice;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.core.env.PropertyResolver;

/**
 * Applies the {@link QueueLockedInterceptor} to methods annotated with {@link QueueLocked},
 * directly or through a meta-annotation, on the class or an interface it implements. Its
 * order places it among the other advisors of a bean: lower is outer. Register it as an
 * infrastructure bean so that every auto-proxy creator picks it up.
 */
public class QueueLockedAdvisor extends AbstractPointcutAdvisor {

    private final Pointcut pointcut = new StaticMethodMatcherPointcut() {
        @Override
        public boolean matches(Method method, Class<?> targetClass) {
            return !QueueLockedDeclarations.of(method, targetClass).isEmpty();
        }
    };
    private final QueueLockedMethods methods;
    private final QueueLockedInterceptor interceptor;
    private final Supplier<LockTemplate> template;
    private final Supplier<LostLeasePolicy> lostLeasePolicy;

    /**
     * @param lockTemplate     the template to lock with, asked for on first use
     * @param lostLeasePolicy  what to do when a lease is lost during a call, asked for once
     * @param placeholders     resolves {@code ${...}} in namespaces and durations
     * @param beanFactory      resolves {@code @bean} references in entity expressions
     * @param order            the advisor's order; lower is outer
     * @param events           where skipped calls are published ({@link QueueLockedSkippedEvent})
     */
    public QueueLockedAdvisor(Supplier<LockTemplate> lockTemplate, Supplier<LostLeasePolicy> lostLeasePolicy,
            PropertyResolver placeholders, BeanFactory beanFactory, int order, ApplicationEventPublisher events) {
        this.template = cachedWithoutLock(lockTemplate);
        this.lostLeasePolicy = cachedWithoutLock(lostLeasePolicy);
        this.methods = new QueueLockedMethods(placeholders, beanFactory, template);
        this.interceptor = new QueueLockedInterceptor(methods, template, this.lostLeasePolicy, events::publishEvent);
        setOrder(order);
    }

    /**
     * Caches the first answer without a lock: a lock (SingletonSupplier's) parked Netty event loops that made the
     * first reactive calls at once. Two lookups of the same singleton bean are harmless.
     */
    private static <T> Supplier<T> cachedWithoutLock(Supplier<T> lookup) {
        AtomicReference<T> cached = new AtomicReference<>();
        return () -> {
            T value = cached.get();
            if (value == null) {
                cached.compareAndSet(null, lookup.get());
                value = cached.get();
            }
            return value;
        };
    }

    /**
     * Looks the template and the lost-lease policy up now, once the singletons exist, so that no call does: a
     * reactive method's first calls run on event loops, and two lookups at once park one of them on the bean
     * factory's locks.
     */
    void lookUpBeans() {
        template.get();
        lostLeasePolicy.get();
    }

    @Override
    public Pointcut getPointcut() {
        return pointcut;
    }

    @Override
    public Advice getAdvice() {
        return interceptor;
    }

    QueueLockedMethods methods() {
        return methods;
    }
}
