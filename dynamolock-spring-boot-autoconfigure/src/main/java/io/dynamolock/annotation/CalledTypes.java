package io.dynamolock.annotation;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.support.AopUtils;

/**
 * The classes by which a {@link QueueLocked} method is judged (its declaration read, its class type variables
 * resolved, its description written): the start and each call ask here, so that they judge a method alike. For most
 * beans it is the target's class. For a Spring Data repository's shape, a proxy of the annotated repository interface
 * over a target whose class does not implement it ({@code SimpleJpaRepository}), the proxy's advice answering the
 * interface's methods, it is that interface: the target's class does not have them, nor say what the interface's
 * type variables are.
 */
final class CalledTypes {

    private CalledTypes() {
    }

    /**
     * The classes whose {@code @QueueLocked} methods a call on {@code bean} (as created) runs: its target's, and for
     * an AOP proxy each interface it proxies that its target does not implement.
     */
    static List<Class<?>> of(Object bean) {
        Class<?> target = AopProxyUtils.ultimateTargetClass(bean);
        List<Class<?>> types = new ArrayList<>(List.of(target));
        if (AopUtils.isAopProxy(bean)) {
            for (Class<?> proxied : AopProxyUtils.proxiedUserInterfaces(bean)) {
                if (!proxied.isAssignableFrom(target)) {
                    types.add(proxied);
                }
            }
        }
        return types;
    }

    /**
     * The class {@code invocation}'s method is judged by: {@code targetClass} (the target's, or {@code null} without
     * a target) if it has the method; else the first interface the proxy was asked to implement that declares or
     * inherits it, as the start judged it.
     */
    static Class<?> ofCall(MethodInvocation invocation, Class<?> targetClass) {
        Method method = invocation.getMethod();
        if (targetClass == null || method.getDeclaringClass().isAssignableFrom(targetClass)
                || !(invocation instanceof ProxyMethodInvocation proxied) || !AopUtils.isAopProxy(proxied.getProxy())) {
            return targetClass;
        }
        for (Class<?> proxiedInterface : AopProxyUtils.proxiedUserInterfaces(proxied.getProxy())) {
            if (method.getDeclaringClass().isAssignableFrom(proxiedInterface)) {
                return proxiedInterface;
            }
        }
        return targetClass;
    }
}
