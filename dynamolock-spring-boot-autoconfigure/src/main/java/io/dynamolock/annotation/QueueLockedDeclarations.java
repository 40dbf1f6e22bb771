package io.dynamolock.annotation;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.util.ClassUtils;
import org.springframework.util.ConcurrentReferenceHashMap;

/**
 * The {@link QueueLocked} declarations that apply to a method as a bean of a given class runs it: on the method, on
 * what it overrides, and on every interface method the class implements with it, also one it inherits from a
 * superclass that does not implement that interface ({@code class Bill extends Runner implements Bills}, where
 * {@code Runner.run} implements {@code Bills.run}). A search that starts at the method's declaring class misses that
 * interface, and the method ran unlocked. A declaration overridden by one in a subtype does not apply, as for
 * {@code @Transactional}; the pointcut, the interceptor and the start-up check all ask this class, so they agree.
 */
final class QueueLockedDeclarations {

    private static final Map<Class<?>, List<Method>> LOCKED_METHODS = new ConcurrentReferenceHashMap<>();

    private QueueLockedDeclarations() {
    }

    /**
     * The distinct declarations that apply, each with the annotation it came through; more than one means the method
     * is locked twice over, which one lock request cannot do.
     */
    static List<MergedAnnotation<QueueLocked>> of(Method method, Class<?> targetClass) {
        Class<?> type = targetClass != null ? targetClass : method.getDeclaringClass();
        Method specific = AopUtils.getMostSpecificMethod(method, type);
        Set<Method> declarations = new LinkedHashSet<>(List.of(method, specific));
        if (!Modifier.isStatic(specific.getModifiers()) && !Modifier.isPrivate(specific.getModifiers())) {
            for (Class<?> implemented : ClassUtils.getAllInterfacesForClassAsSet(type)) {
                for (Method candidate : lockedMethods(implemented)) {
                    if (candidate.getName().equals(specific.getName())
                            && candidate.getParameterCount() == specific.getParameterCount()
                            && AopUtils.getMostSpecificMethod(candidate, type).equals(specific)) {
                        declarations.add(candidate);
                    }
                }
            }
        }
        List<MergedAnnotation<QueueLocked>> found = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>();
        for (Method declaration : declarations) {
            // Spring's search also finds a static interface method of the same signature, which nothing implements.
            MergedAnnotations.from(declaration, SearchStrategy.TYPE_HIERARCHY).stream(QueueLocked.class)
                    .filter(annotation -> !(annotation.getSource() instanceof Method source) || source.equals(specific)
                            || !Modifier.isStatic(source.getModifiers()))
                    .filter(annotation -> seen.add(annotation.getSource() + " " + annotation.getMetaTypes()))
                    .forEach(found::add);
        }
        Map<QueueLocked, MergedAnnotation<QueueLocked>> applying = new LinkedHashMap<>();
        found.stream().filter(annotation -> !overridden(annotation, found))
                .forEach(annotation -> applying.putIfAbsent(annotation.synthesize(), annotation));
        return List.copyOf(applying.values());
    }

    /**
     * The methods of {@code implemented} (its own and its super-interfaces') that carry {@code @QueueLocked}: asked for
     * every method of every bean as the proxies are made, so looked for once per interface.
     */
    private static List<Method> lockedMethods(Class<?> implemented) {
        return LOCKED_METHODS.computeIfAbsent(implemented, type -> Arrays.stream(type.getMethods())
                .filter(method -> !Modifier.isStatic(method.getModifiers()))
                .filter(method -> MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY)
                        .isPresent(QueueLocked.class))
                .toList());
    }

    /**
     * Declared on a method that another declaration's method overrides: one in a subtype, or, for an interface's,
     * any class's. Every declaration found is of the one method the bean runs, so a class's is the implementation's
     * own, also where a superclass that does not name the interface declares it.
     */
    private static boolean overridden(MergedAnnotation<QueueLocked> annotation,
            List<MergedAnnotation<QueueLocked>> all) {
        Class<?> declaredIn = declaringClass(annotation);
        return declaredIn != null && all.stream().map(QueueLockedDeclarations::declaringClass)
                .anyMatch(other -> other != null && other != declaredIn && (declaredIn.isAssignableFrom(other)
                        || declaredIn.isInterface() && !other.isInterface()));
    }

    private static Class<?> declaringClass(MergedAnnotation<QueueLocked> annotation) {
        return annotation.getSource() instanceof Method method ? method.getDeclaringClass() : null;
    }

    /** How a declaration is named in a message: the annotation written, and the method it is written on. */
    static String through(MergedAnnotation<QueueLocked> annotation) {
        String on = annotation.getSource() instanceof Method method
                ? " on " + method.getDeclaringClass().getSimpleName() + "." + method.getName() : "";
        return "@" + annotation.getRoot().getType().getSimpleName() + on;
    }
}
