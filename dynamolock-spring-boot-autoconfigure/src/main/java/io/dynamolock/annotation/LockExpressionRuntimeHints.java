package io.dynamolock.annotation;

import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * A native image's hint for {@link LockExpressionRoot}: SpEL reads {@code #root.args}, {@code #root.method} and the
 * others by calling its getters reflectively, and nothing else in the application refers to them. Registered in
 * {@code META-INF/spring/aot.factories}.
 */
class LockExpressionRuntimeHints implements RuntimeHintsRegistrar {

    @Override
    public void registerHints(RuntimeHints hints, ClassLoader classLoader) {
        hints.reflection().registerType(LockExpressionRoot.class, MemberCategory.INVOKE_PUBLIC_METHODS);
    }
}
