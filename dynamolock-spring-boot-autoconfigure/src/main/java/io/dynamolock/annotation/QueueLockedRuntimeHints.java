package io.dynamolock.annotation;

import java.util.stream.Stream;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;
import org.springframework.util.ClassUtils;

/**
 * A native image's hints for {@code @QueueLocked}: SpEL reads {@code #root.args}, {@code #root.method} and the others
 * by calling {@link LockExpressionRoot}'s getters reflectively; and the optional classes this package looks up by
 * name (Reactor, Kotlin coroutines, Spring MVC's asynchronous return types, spring-tx), which a native image finds
 * only if registered: unregistered, each would read as absent, and a method returning {@code DeferredResult}, say,
 * would be taken as a plain value and released before its work is done. Registered in
 * {@code META-INF/spring/aot.factories}; a class absent at build time is left out.
 */
class QueueLockedRuntimeHints implements RuntimeHintsRegistrar {

    @Override
    public void registerHints(RuntimeHints hints, ClassLoader classLoader) {
        hints.reflection().registerType(LockExpressionRoot.class, MemberCategory.INVOKE_PUBLIC_METHODS);
        Stream.concat(QueueLockedMethods.LATER_WORK.stream(), Stream.of(QueueLockedMethods.HTTP_ENTITY,
                QueueLockedMethods.CONTROLLER, QueueLockedMethods.MONO, QueueLockedMethods.FLUX,
                QueueLockedMethods.KOTLIN_FLOW, QueueLockedMethods.KOTLIN_DEFERRED,
                QueueLockedMethods.COROUTINES_REACTOR, QueueLockedMethodValidator.TRANSACTION_INTERCEPTOR,
                QueueLockedInterceptor.TRANSACTION_SYNCHRONIZATION))
                .forEach(name -> registerIfPresent(hints, classLoader, name));
    }

    /** A type looked up by name, registered (without members) if the build has it. */
    private static void registerIfPresent(RuntimeHints hints, ClassLoader classLoader, String name) {
        if (ClassUtils.isPresent(name, classLoader)) {
            hints.reflection().registerType(TypeReference.of(name));
        }
    }
}
