package io.dynamolock.reactive;

import java.util.List;
import java.util.stream.Stream;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;
import org.springframework.util.ClassUtils;

/**
 * A native image's hints for the optional classes looked up by name on the reactive side: Micrometer's
 * {@code Observation} here, and what dynamolock-kotlin's {@code ReactorScopes} checks for (it has no Spring of its
 * own to register hints with). Unregistered, a native image would read them as absent: a {@code withLock} inside a
 * {@code @QueueLocked} suspend function would no longer find the scope it holds and would wait behind itself.
 * Registered in {@code META-INF/spring/aot.factories}; a class absent at build time is left out.
 */
class ReactiveRuntimeHints implements RuntimeHintsRegistrar {

    /** dynamolock-kotlin's {@code ReactorScopes.present}. */
    static final List<String> KOTLIN_REACTOR_CLASSES = List.of("kotlinx.coroutines.reactor.ReactorContext",
            "reactor.util.context.Context");

    @Override
    public void registerHints(RuntimeHints hints, ClassLoader classLoader) {
        Stream.concat(Stream.of(SubscriberObservation.OBSERVATION), KOTLIN_REACTOR_CLASSES.stream())
                .filter(name -> ClassUtils.isPresent(name, classLoader)).forEach(name -> hints.reflection().registerType(TypeReference.of(name)));
    }
}
