package io.dynamolock.annotation;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockOperations;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockScope;
import io.dynamolock.core.LockWaitTimeoutException;
import io.dynamolock.reactive.ReactiveLockOperations;
import io.dynamolock.reactive.ReactiveLockTemplate;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInvocation;
import org.reactivestreams.Publisher;
import org.springframework.aop.ProxyMethodInvocation;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The {@link QueueLocked} path of methods returning {@code Mono}, {@code Flux} or a Kotlin {@code Flow} (whose
 * collections take the lock in the collecting coroutine, {@code LockedFlow}), and of Kotlin suspend functions
 * (whose {@code proceed()} Spring AOP answers with a lazy {@code Mono}, awaited by the proxy after the advice
 * returns). It returns a publisher (or flow) that, on each subscription (or collection), takes the lock through a
 * {@link ReactiveLockTemplate} and only then calls the method (a clone of the invocation, so re-subscribing calls
 * it again through the rest of the advice chain): what the method does at assembly time is inside the lock too.
 * A wait that runs out before the grant fails the publisher with {@link LockWaitTimeoutException}, or with
 * {@link WaitTimeoutPolicy#SKIP} completes it empty (a skipped suspend function returns without running). With a
 * {@code minHold}, the lock outlives a shorter body until then, released on a timer, the caller not kept waiting.
 * A call joins what the subscriber's {@code Context} holds, and not what its calling thread holds: unrelated work
 * runs on a thread inside a blocking hold too (a sink's subscriber, a coroutine on {@code Dispatchers.Unconfined}
 * resumed there), and would run beside the hold's own (R10). A caller that blocks on the call there carries the
 * hold itself ({@link ReactiveLockOperations#inScope}); one that does not waits for itself, and its time-out says so.
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

    /** {@code judgedBy}: the class the method was judged by, as the start judged it (see {@code CalledTypes}). */
    Object invoke(MethodInvocation invocation, LockedMethod locked, LockRequest request, Class<?> judgedBy) {
        if (!(invocation instanceof ProxyMethodInvocation proxied)) {
            throw new IllegalStateException("@QueueLocked on " + locked.description() + " needs a Spring AOP proxy"
                    + " invocation to call the method after the lock is granted; got " + invocation.getClass());
        }
        // Only to explain a time-out: the thread's hold is not joined (see the class comment).
        LockScope threadScope = lockOperations.get().currentScope();
        // Kotlin's classes are touched only in CoroutineBody, and only here: the rest loads without them.
        return switch (locked.returns()) {
            case SUSPEND -> CoroutineBody.suspendCall(shape ->
                    locked(proxied, locked, request, threadScope, shape, judgedBy));
            case FLOW -> CoroutineBody.flowCall(shape ->
                    locked(proxied, locked, request, threadScope, shape, judgedBy));
            case FLUX -> locked(proxied, locked, request, threadScope, null, judgedBy);
            default -> locked(proxied, locked, request, threadScope, null, judgedBy).singleOrEmpty();
        };
    }

    /**
     * A suspend function's result, if it is no work still going on. Through {@code Any?}, a future not yet done, or a
     * {@code Deferred}, a publisher or a controller's {@code Callable}, done or not (they are not asked), would run
     * after the release, as the start refuses for a declared return type: the call fails, the lock released once the
     * coroutines the body started have ended, as after any failure of the body. So does a {@code ResponseEntity}
     * whose body is such work ({@link #withFinishedBody}). Only a suspend function's: a {@code Mono}'s or
     * {@code Flux}'s elements are values, as they are for a declared {@code Mono<CompletableFuture<T>>}, but for a
     * {@code Mono}'s {@code ResponseEntity}.
     */
    private static Object finished(Object result, LockedMethod locked, Class<?> owner) {
        if (QueueLockedMethods.isUnfinishedWork(result, owner)) {
            throw QueueLockedMethods.undeclaredLaterWork(locked, result.getClass());
        }
        return withFinishedBody(result, locked, owner);
    }

    /**
     * A value whose {@code ResponseEntity} body, if it has one, is no work still going on: Spring streams the body
     * after the {@code Mono} gave it, or the suspend function returned it, and the lock was released.
     */
    private static Object withFinishedBody(Object value, LockedMethod locked, Class<?> owner) {
        IllegalStateException bodyLeftRunning = QueueLockedMethods.unfinishedBody(value, locked, owner);
        if (bodyLeftRunning != null) {
            throw bodyLeftRunning;
        }
        return value;
    }

    /**
     * What a call returns whose lock could not be asked for ({@code refused}: an entity null, blank or a value that
     * arrives later, or an expression that threw), the method not called: a publisher, or a flow, that fails with it,
     * as a reactive caller expects an error, as it does a wait time-out. A suspend function throws it, which is how
     * its caller sees a suspend function fail.
     */
    Object refused(LockedMethod locked, RuntimeException refused) {
        return switch (locked.returns()) {
            case SUSPEND -> throw refused;
            case FLOW -> CoroutineBody.flowCall(shape -> Flux.error(refused));
            case FLUX -> Flux.error(refused);
            default -> Mono.error(refused);
        };
    }

    /**
     * {@code timedOut}, saying that the caller may have waited for a hold of its calling thread ({@code scope}),
     * and the way out, after what it said already and with its cause; as it is if the thread held no live hold of
     * the lock that timed out.
     */
    static LockWaitTimeoutException explained(LockWaitTimeoutException timedOut, LockScope scope) {
        for (LockHandle lock : scope.locks()) {
            for (LockHandle part : lock.parts()) {
                if (part.entity().equals(timedOut.entity()) && part.namespace().equals(timedOut.namespace())
                        && part.isValid()) {
                    String why = "This call was made on a thread inside a blocking hold of " + lock + " (a"
                            + " @QueueLocked method or an execute callback), which a publisher does not join. If that"
                            + " hold's own code blocked on this call, it waited for itself: carry the hold into the"
                            + " call with .contextWrite(ReactiveLockOperations.inScope(locks.currentScope())) before"
                            + " block(), or runBlocking(locks.currentScope().asCoroutineContext()) in Kotlin. Work"
                            + " that only ran on that thread (a sink's subscriber, a resumed coroutine) must not"
                            + " carry it.";
                    LockWaitTimeoutException explained = new LockWaitTimeoutException(timedOut.entity(),
                            timedOut.namespace(), timedOut.waited(), timedOut.position(), timedOut.ownersAhead(),
                            timedOut.hint() == null ? why : timedOut.hint() + " " + why);
                    if (timedOut.getCause() != null) {
                        explained.initCause(timedOut.getCause());
                    }
                    return explained;
                }
            }
        }
        return timedOut;
    }

    /**
     * How a call's arguments and body are shaped: a suspend function's, run as a coroutine whose cancellation the
     * lock waits for ({@code CoroutineBody}), or a {@code Flow}'s, collected by the coroutine that waits for the
     * grant ({@code LockedFlow}).
     */
    interface CallShape {

        Object[] arguments(Object[] given);

        /**
         * The publisher of what the method returned; {@code usable} turns false once the lock is lost under
         * on-lost-lease=fail, for a body that starts its work later than its subscription (a flow's collection).
         */
        Publisher<Object> body(Object returned, BooleanSupplier usable);
    }

    /** On each subscription: the lock, then the method, shaped by {@code shape} ({@code null}: as given). */
    private Flux<Object> locked(ProxyMethodInvocation proxied, LockedMethod locked, LockRequest request,
            LockScope threadScope, CallShape shape, Class<?> judgedBy) {
        return Flux.defer(() -> {
            AtomicBoolean granted = new AtomicBoolean();
            return template().executeMany(request, locked.minHold(), lock -> {
                granted.set(true);
                return body(proxied, lock, locked, shape, judgedBy);
            }).onErrorResume(failure -> failure instanceof LockWaitTimeoutException && !granted.get(), failure -> {
                LockWaitTimeoutException timedOut = explained((LockWaitTimeoutException) failure, threadScope);
                if (locked.onWaitTimeout() == WaitTimeoutPolicy.SKIP) {
                    skip.apply(locked, timedOut); // explained, it has advice: a WARN, not a DEBUG line only
                    return Mono.empty();
                }
                return Mono.error(timedOut);
            });
        });
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
            LockedMethod locked, CallShape shape, Class<?> owner) {
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
        if (shape == null) {
            // A Mono's value is checked inside the body, as a suspend function's result below: the release follows.
            return locked.returns() == LockedMethod.Returns.MONO
                    ? Mono.from((Publisher<Object>) returned).map(value -> withFinishedBody(value, locked, owner))
                    : (Publisher<Object>) returned;
        }
        if (locked.returns() == LockedMethod.Returns.SUSPEND) {
            // Checked as part of the body, not after the shape: a refusal there would cancel the shape's wait for the
            // coroutines the body started (a proxied call it gave up on, still in a blocking step), and release the
            // lock beside them.
            returned = Flux.from((Publisher<Object>) returned).map(result -> finished(result, locked, owner));
        }
        return shape.body(returned, () -> !failOnLostLease.getAsBoolean() || lock.isValid());
    }
}
