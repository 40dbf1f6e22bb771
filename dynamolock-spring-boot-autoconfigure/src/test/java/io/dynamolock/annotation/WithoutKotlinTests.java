package io.dynamolock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dynamolock.HidingClassLoader;
import org.junit.jupiter.api.Test;

/**
 * The advice's reactive path in an application without Kotlin: Kotlin is an optional dependency, touched only by
 * {@link CoroutineBody} for suspend functions and {@link LockedFlow} for Flows, so
 * {@link ReactiveQueueLockedInvocation} must load, link and be reflected on (as frameworks do) without it.
 */
class WithoutKotlinTests {

    @Test
    void theReactiveAdviceLoadsWithoutKotlin() throws Exception {
        ClassLoader withoutKotlin = new HidingClassLoader(getClass().getClassLoader(), getClass().getPackageName(),
                "kotlin.", "kotlinx.");
        Class<?> invocation = Class.forName(ReactiveQueueLockedInvocation.class.getName(), true, withoutKotlin);
        assertThat(invocation.getClassLoader()).isSameAs(withoutKotlin);
        assertThat(invocation.getDeclaredMethods()).isNotEmpty();
        // The loader does hide Kotlin: the one class that needs it cannot be linked.
        assertThatThrownBy(() -> Class.forName(CoroutineBody.class.getName(), true, withoutKotlin))
                .isInstanceOf(NoClassDefFoundError.class).hasMessageContaining("kotlin");
    }
}
