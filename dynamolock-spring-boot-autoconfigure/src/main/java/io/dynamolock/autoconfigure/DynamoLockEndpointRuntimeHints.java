package io.dynamolock.autoconfigure;

import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;
import org.springframework.util.ClassUtils;

/**
 * A native image's hints for {@link DynamoLockEndpoint}: the bodies Jackson writes reflectively (Boot registers an
 * operation's return type for that, but these operations return {@code Object}, a body or an error, and so reach
 * none of them); and the servlet classes it looks up by name, without which a native image would read them as
 * absent and no longer refuse a path whose {@code ;} names another lock. Registered in
 * {@code META-INF/spring/aot.factories}; nothing without Actuator, whose type the bodies implement.
 */
class DynamoLockEndpointRuntimeHints implements RuntimeHintsRegistrar {

    private static final String OPERATION_RESPONSE_BODY =
            "org.springframework.boot.actuate.endpoint.OperationResponseBody";

    @Override
    public void registerHints(RuntimeHints hints, ClassLoader classLoader) {
        if (!ClassUtils.isPresent(OPERATION_RESPONSE_BODY, classLoader)) {
            return;
        }
        // The types they hold (EntryDescriptor, LockInfo) are bound with them.
        new BindingReflectionHintsRegistrar().registerReflectionHints(hints.reflection(),
                DynamoLockEndpoint.LocksDescriptor.class, DynamoLockEndpoint.QueueDescriptor.class,
                DynamoLockEndpoint.BreakDescriptor.class, DynamoLockEndpoint.ErrorDescriptor.class);
        DynamoLockEndpoint.PathParameters.SERVLET_CLASSES.stream()
                .filter(name -> ClassUtils.isPresent(name, classLoader)).forEach(name -> hints.reflection().registerType(TypeReference.of(name)));
    }
}
