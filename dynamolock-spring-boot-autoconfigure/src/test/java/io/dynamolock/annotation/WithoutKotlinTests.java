package io.dynamolock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import org.junit.jupiter.api.Test;

/**
 * The advice's reactive path in an application without Kotlin: Kotlin is an optional dependency, touched only by
 * {@link CoroutineBody} for suspend functions and {@link LockedFlow} for Flows, so
 * {@link ReactiveQueueLockedInvocation} must load, link and be reflected on (as frameworks do) without it.
 */
class WithoutKotlinTests {

    @Test
    void theReactiveAdviceLoadsWithoutKotlin() throws Exception {
        ClassLoader withoutKotlin = new WithoutKotlin(getClass().getClassLoader());
        Class<?> invocation = Class.forName(ReactiveQueueLockedInvocation.class.getName(), true, withoutKotlin);
        assertThat(invocation.getClassLoader()).isSameAs(withoutKotlin);
        assertThat(invocation.getDeclaredMethods()).isNotEmpty();
        // The loader does hide Kotlin: the one class that needs it cannot be linked.
        assertThatThrownBy(() -> Class.forName(CoroutineBody.class.getName(), true, withoutKotlin))
                .isInstanceOf(NoClassDefFoundError.class).hasMessageContaining("kotlin");
    }

    /** Defines this package's classes itself (child first) and hides every kotlin and kotlinx class. */
    private static final class WithoutKotlin extends ClassLoader {

        private final ClassLoader parent;

        WithoutKotlin(ClassLoader parent) {
            super(parent);
            this.parent = parent;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (name.startsWith("kotlin.") || name.startsWith("kotlinx.")) {
                throw new ClassNotFoundException(name + " (hidden: no Kotlin in this application)");
            }
            if (!name.startsWith(WithoutKotlinTests.class.getPackageName() + ".")) {
                return parent.loadClass(name);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> loaded = findLoadedClass(name);
                if (loaded != null) {
                    return loaded;
                }
                try (InputStream in = parent.getResourceAsStream(name.replace('.', '/') + ".class")) {
                    if (in == null) {
                        throw new ClassNotFoundException(name);
                    }
                    byte[] bytes = in.readAllBytes();
                    return defineClass(name, bytes, 0, bytes.length);
                }
                catch (IOException ex) {
                    throw new ClassNotFoundException(name, ex);
                }
            }
        }
    }
}
