package io.dynamolock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.annotation.LockExpressionRoot;
import io.dynamolock.core.LockInfo;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.core.io.support.SpringFactoriesLoader;
import reactor.core.publisher.Mono;

/**
 * What a native image needs for what dynamolock reaches by reflection and Spring's own AOT processing does not
 * register, from the registrars in {@code META-INF/spring/aot.factories} as the AOT engine loads them.
 */
class DynamoLockRuntimeHintsTests {

    @Test
    void theExpressionRootsPropertiesCanBeReadBySpel() {
        RuntimeHints hints = registered(getClass().getClassLoader());

        // #root.method, #root.methodName, #root.args, #root.target, #root.targetClass: SpEL calls the getters.
        Stream.of("getMethod", "getMethodName", "getArgs", "getTarget", "getTargetClass").forEach(getter ->
                assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(LockExpressionRoot.class, getter))
                        .as(getter).accepts(hints));
    }

    /**
     * The endpoint's operations return {@code Object} (a body or an error), so Boot's hints for an operation's
     * return type do not reach the bodies Jackson writes: every one of them, and the types they hold, is bound.
     */
    @Test
    void theEndpointsBodiesCanBeWrittenAsJson() {
        RuntimeHints hints = registered(getClass().getClassLoader());

        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(DynamoLockEndpoint.LocksDescriptor.class,
                "locks")).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(LockInfo.class, "since")).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(DynamoLockEndpoint.QueueDescriptor.class,
                "entries")).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(DynamoLockEndpoint.EntryDescriptor.class,
                "leaseExpiresAt")).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(DynamoLockEndpoint.BreakDescriptor.class,
                "broken")).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(DynamoLockEndpoint.ErrorDescriptor.class,
                "message")).accepts(hints);
    }

    /**
     * Optional classes dynamolock looks up by name: a native image finds one only if registered, and would read an
     * unregistered one as absent (the endpoint would stop refusing a {@code ;} path, a {@code DeferredResult} method
     * would be released before its work is done, {@code withLock} would wait behind its own scope).
     */
    @Test
    void theOptionalClassesLookedUpByNameCanBeFound() {
        RuntimeHints hints = registered(getClass().getClassLoader());

        Stream.of("jakarta.servlet.http.HttpServletRequest",
                "org.springframework.web.context.request.ServletRequestAttributes",
                "org.springframework.transaction.support.TransactionSynchronizationManager",
                "org.springframework.transaction.interceptor.TransactionInterceptor",
                "org.springframework.web.context.request.async.DeferredResult",
                "org.reactivestreams.Publisher", "org.springframework.http.HttpEntity",
                "org.springframework.stereotype.Controller", "reactor.core.publisher.Mono",
                "reactor.core.publisher.Flux", "io.micrometer.observation.Observation", "reactor.util.context.Context")
                .forEach(name -> assertThat(RuntimeHintsPredicates.reflection().onType(TypeReference.of(name)))
                        .as(name).accepts(hints));
    }

    /** A class the build does not have is left out rather than registered by name. */
    @Test
    void anOptionalClassAbsentAtBuildTimeIsNotRegistered() {
        RuntimeHints hints = registered(new FilteredClassLoader(Mono.class));

        assertThat(RuntimeHintsPredicates.reflection().onType(Mono.class)).rejects(hints);
        assertThat(RuntimeHintsPredicates.reflection().onType(TypeReference.of("reactor.core.publisher.Flux")))
                .accepts(hints);
    }

    @Test
    void withoutActuatorNoEndpointHintIsRegistered() {
        RuntimeHints hints = registered(new FilteredClassLoader(OperationResponseBody.class));

        assertThat(RuntimeHintsPredicates.reflection().onType(DynamoLockEndpoint.LocksDescriptor.class))
                .rejects(hints);
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(LockExpressionRoot.class, "getArgs"))
                .accepts(hints);
    }

    private static RuntimeHints registered(ClassLoader classLoader) {
        RuntimeHints hints = new RuntimeHints();
        SpringFactoriesLoader.forResourceLocation("META-INF/spring/aot.factories",
                DynamoLockRuntimeHintsTests.class.getClassLoader())
                .load(RuntimeHintsRegistrar.class)
                .forEach(registrar -> registrar.registerHints(hints, classLoader));
        return hints;
    }
}
