package io.dynamolock.annotation;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockOperations;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockScope;
import io.dynamolock.core.LockWaitTimeoutException;
import io.dynamolock.reactive.ReactiveLockOperations;
import io.dynamolock.reactive.ReactiveLockTemplate;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInvocation;
import org.reactivestreams.Publisher;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The {@link QueueLocked} path of methods returning {@code Mono}, {@code Flux} or a Kotlin {@code Flow} (adapted
 * to and from a {@code Flux} by Spring's {@code ReactiveAdapterRegistry}), and of Kotlin suspend functions
 * (whose {@code proceed()} Spring AOP answers with a lazy {@code Mono}, awaited by the proxy after the advice
 * returns). It returns a publisher that, on each subscription, takes the lock through a
 * {@link ReactiveLockTemplate} and only then calls the method (a clone of the invocation, so re-subscribing calls
 * it again through the rest of the advice chain): what the method does at assembly time is inside the lock too.
 * A wait that runs out before the grant fails the publisher with {@link LockWaitTimeoutException}, or with
 * {@link WaitTimeoutPolicy#SKIP} completes it empty (a skipped suspend function returns without running). With a
 * {@code minHold}, the lock outlives a shorter body until then, released on a timer, the caller not kept waiting.
 * A call made on a thread inside a blocking hold (a {@code @QueueLocked} method, an {@code execute} callback) joins
 * what that thread holds, as well as what the subscriber's {@code Context} holds.
 */
final class ReactiveQueueLockedInvocation {

    private final Supplier<? extends LockOperations> lockOperations;
    private final BooleanSupplier failOnLostLease;
    /** Created on first use without a lock (a lock could park an event loop); a second copy would be harmless. */
    private volatile ReactiveLockTemplate template;
    private final BiFunction<LockedMethod, LockWaitTimeoutException, Object> skip;

    ReactiveQueueLockedInvocation(Supplier<? extends LockOperations> lockOperations, BooleanSupplier failOnLostLease,
            BiFunction<LockedMethod, LockWaitTimeoutException, Object> skip) {
        this.lockOperations = lockOperations;
        this.failOnLostLease = failOnLostLease;
        this.skip = skip;
    }

    Object invoke(MethodInvocation invocation, LockedMethod locked, LockRequest request) {
        if (!(invocation instanceof ProxyMethodInvocation proxied)) {
            throw new IllegalStateException("@QueueLocked on " + locked.description() + " needs a Spring AOP proxy"
                    + " invocation to call the method after the lock is granted; got " + invocation.getClass());
        }
        // Made on the calling thread: a call made inside a blocking hold of the lock (and blocked on there) joins
        // it, as a blocking call would. Read now, at the call, since the subscription may come on another thread.
        LockScope callers = lockOperations.get().currentScope();
        // Kotlin's classes are touched only in CoroutineBody, and only here: the rest loads without them.
        return switch (locked.returns()) {
            case SUSPEND -> CoroutineBody.suspendCall(shape -> locked(proxied, locked, request, callers, shape));
            case FLOW -> flowAdapter(locked).fromPublisher(
                    CoroutineBody.flowCall(shape -> locked(proxied, locked, request, callers, shape)));
            case FLUX -> locked(proxied, locked, request, callers, null);
            default -> locked(proxied, locked, request, callers, null).singleOrEmpty();
        };
    }

    /** {@code inner}'s locks inside {@code outer}'s: the subscriber's context is nested in the calling thread's. */
    private static LockScope inside(LockScope outer, LockScope inner) {
        LockScope scope = outer;
        List<LockHandle> locks = inner.locks();
        for (int i = locks.size() - 1; i >= 0; i--) {
            scope = scope.with(locks.get(i));
        }
        return scope;
    }

    /**
     * How a call's arguments and body are shaped: a suspend function's or a {@code Flow}'s, run as a coroutine
     * whose cancellation the lock waits for ({@code CoroutineBody}).
     */
    interface CallShape {

        Object[] arguments(Object[] given);

        /** The publisher of what the method returned. */
        Publisher<Object> body(Object returned);
    }

    /** On each subscription: the lock, then the method, shaped by {@code shape} ({@code null}: as given). */
    private Flux<Object> locked(ProxyMethodInvocation proxied, LockedMethod locked, LockRequest request,
            LockScope callers, CallShape shape) {
        Flux<Object> locked$ = Flux.defer(() -> {
            AtomicBoolean granted = new AtomicBoolean();
            return template().executeMany(request, locked.minHold(), lock -> {
                granted.set(true);
                return body(proxied, lock, locked, shape);
            }).onErrorResume(failure -> failure instanceof LockWaitTimeoutException && !granted.get()
                    && locked.onWaitTimeout() == WaitTimeoutPolicy.SKIP, failure -> {
                        skip.apply(locked, (LockWaitTimeoutException) failure);
                        return Mono.empty();
                    });
        });
        if (!callers.isEmpty()) {
            locked$ = locked$.contextWrite(context -> context.put(LockScope.class,
                    inside(callers, ReactiveLockOperations.scope(context))));
        }
        return locked$;
    }

    /** Spring's own adapter between a Kotlin {@code Flow} and a {@code Publisher} (kotlinx-coroutines-reactor). */
    private static ReactiveAdapter flowAdapter(LockedMethod locked) {
        ReactiveAdapter adapter = ReactiveAdapterRegistry.getSharedInstance().getAdapter(locked.method().getReturnType());
        if (adapter == null) {
            throw new IllegalStateException("@QueueLocked on " + locked.description() + ": no ReactiveAdapter for "
                    + locked.method().getReturnType().getName() + "; is kotlinx-coroutines-reactor on the class path?");
        }
        return adapter;
    }

    private ReactiveLockTemplate template() {
        ReactiveLockTemplate created = template;
        if (created == null) {
            created = new ReactiveLockTemplate(lockOperations.get(), failOnLostLease.getAsBoolean());
            template = created;
        }
        return created;
    }

    /** Calls the method with the lock in the thread's scope too (blocking nested calls made at assembly join). */
    @SuppressWarnings("unchecked")
    private Publisher<Object> body(ProxyMethodInvocation invocation, LockHandle lock,
            LockedMethod locked, CallShape shape) {
        Object returned;
        try {
            MethodInvocation call = shape == null ? invocation.invocableClone()
                    : invocation.invocableClone(shape.arguments(invocation.getArguments()));
            returned = lockOperations.get().inScope(lock, held -> call.proceed());
        }
        catch (Throwable ex) {
            return Mono.error(ex);
        }
        if (returned == null) {
            return Mono.empty();
        }
        return shape == null ? (Publisher<Object>) returned : shape.body(returned);
    }
}
