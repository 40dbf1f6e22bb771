package io.dynamolock.reactive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dynamolock.HidingClassLoader;
import java.lang.reflect.Method;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * {@link ReactiveLockTemplate} in an application without Micrometer, an optional dependency: only
 * {@link SubscriberObservation} touches its observations, and only once it has found them on the class path.
 */
class WithoutMicrometerTests {

    @Test
    void aSubscribersContextIsReadWithoutMicrometer() throws Exception {
        ClassLoader withoutMicrometer = new HidingClassLoader(getClass().getClassLoader(), getClass().getPackageName(),
                "io.micrometer.");
        assertThatThrownBy(() -> Class.forName("io.micrometer.observation.Observation", false, withoutMicrometer))
                .isInstanceOf(ClassNotFoundException.class);
        assertThat(Class.forName(ReactiveLockTemplate.class.getName(), true, withoutMicrometer).getDeclaredMethods())
                .isNotEmpty();
        Method around = Class.forName(SubscriberObservation.class.getName(), true, withoutMicrometer)
                .getDeclaredMethod("around", ContextView.class, Supplier.class);
        around.setAccessible(true);
        Supplier<String> call = () -> "called";
        // Anything under the key: the check for an Observation would fail to link without Micrometer.
        assertThat(around.invoke(null, Context.of(SubscriberObservation.KEY, "an observation"), call))
                .isEqualTo("called");
    }
}
