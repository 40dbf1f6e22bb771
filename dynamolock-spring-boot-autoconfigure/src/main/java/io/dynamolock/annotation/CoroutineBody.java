package io.dynamolock.annotation;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
import kotlin.Unit;
import kotlin.coroutines.Continuation;
import kotlin.coroutines.CoroutineContext;
import kotlin.jvm.functions.Function2;
import kotlinx.coroutines.Job;
import kotlinx.coroutines.ThreadContextElement;
import kotlinx.coroutines.flow.Flow;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

/**
 * The coroutine of one call of a {@code @QueueLocked suspend fun}, so that the caller's cancellation waits for it,
 * and the proxied calls made by it or by one collection of a {@code @QueueLocked} method's {@code Flow}
 * ({@link LockedFlow}), so that the lock waits for them.
 *
 * <p>Spring AOP runs a suspend function as a {@code mono {}} coroutine in the context of the continuation passed as
 * its last argument. Cancelling that publisher would release the lock at once, but coroutine cancellation is
 * cooperative: a blocking step the body is in ({@code withContext(Dispatchers.IO) { jdbc }}) runs on, beside the
 * next holder. So this element rides in that coroutine's context and sees its {@code Job} (and those of the suspend
 * functions the body calls through proxies) when it runs, and the caller's cancellation cancels that {@code Job}
 * instead: the call then ends with the cancellation only once all those coroutines have ended, and the lock is
 * released then, as after any error of the body. A {@code Flow} is collected in its collector's coroutine, whose
 * cancellation ends the collection only once the flow's code has stopped; the proxied calls it made are waited for
 * the same way. Kotlin classes are touched only here and in {@link LockedFlow}, so the rest of the advice loads
 * without them (also by reflection: no signature names these classes).
 */
final class CoroutineBody implements ThreadContextElement<Object>, ReactiveQueueLockedInvocation.CallShape {

    private static final Key<CoroutineBody> KEY = new Key<>() {
    };

    /**
     * Where a caller's Reactor context may carry a {@code Consumer<CompletionStage<?>>} that hears of each call as
     * it is subscribed, with a stage that completes once the call has ended (its body's coroutines included): how
     * a {@code @QueueLocked} body ({@link #body}) and dynamolock-kotlin's {@code withLock} keep their lock for a
     * nested call whose coroutine has not started yet when they are cancelled or give up on it. The same key is
     * spelled out there ({@code ReactorScopes.PENDING_CALLS}, in a module this one cannot see): a key spelled
     * differently fails the Kotlin module's {@code SuspendQueueLockedTests
     * .aWithLockCancelledAsItsProxiedCallsCoroutineStartsKeepsItsLockUntilThatCoroutineHasEnded}.
     */
    static final String PENDING_CALLS = "io.dynamolock.pendingCalls";

    /** Cancelled before the body's publisher was subscribed: the call is cancelled instead, as no code ran. */
    private static final Object CANCELLED = new Object();

    /** The body's publisher is subscribed: its coroutine may start at any moment, and is waited for once it has. */
    private static final Object SUBSCRIBED = new Object();

    /**
     * {@code null} until the body's publisher is subscribed, {@link #SUBSCRIBED} until its coroutine runs, then its
     * {@code Job}; or {@link #CANCELLED}.
     */
    private final AtomicReference<Object> state = new AtomicReference<>();

    /**
     * Every coroutine seen with this element: the body's, and those of suspend functions it calls through a proxy
     * (Spring runs each as a coroutine without a parent, in the caller's context, so this element rides along),
     * also through a nested {@code @QueueLocked} call's element ({@link #outer}). Cancelled, the body ends at once
     * while theirs may still be in a blocking step: the lock is released once they have all ended.
     */
    private final Set<Job> coroutines = ConcurrentHashMap.newKeySet();

    /** The {@code @QueueLocked} calls made in the body that have not ended yet ({@link #track}). */
    private final Set<CompletableFuture<?>> calls = ConcurrentHashMap.newKeySet();

    /** The element of the {@code @QueueLocked} coroutine this call or collection was made in, if any. */
    private volatile CoroutineBody outer;

    /** Whether the caller cancelled after the body's publisher was subscribed. */
    private volatile boolean cancelled;

    /** @param outer see {@link #outer}: a suspend function's is known once its arguments are ({@link #arguments}) */
    private CoroutineBody(CoroutineBody outer) {
        this.outer = outer;
    }

    /** The element of one collection of a {@code @QueueLocked} {@code Flow}, in the collector's {@code context}. */
    static CoroutineBody collecting(CoroutineContext context) {
        return new CoroutineBody(context.get(KEY));
    }

    /**
     * A call of a suspend function as a {@code Mono}: {@code locked} runs the call shaped by a new element. A
     * cancellation of the caller after the body's coroutine started cancels that coroutine and lets the call end
     * with it, so the lock is released only once the body has ended; the cancelled caller hears nothing more.
     */
    static Mono<Object> suspendCall(Function<ReactiveQueueLockedInvocation.CallShape, Flux<Object>> locked) {
        return Flux.from(caller -> {
            CoroutineBody body = new CoroutineBody(null);
            Consumer<CompletionStage<?>> pending = caller instanceof CoreSubscriber<?> core
                    ? core.currentContext().getOrDefault(PENDING_CALLS, null) : null;
            Flux<Object> call = locked.apply(body);
            if (pending != null) {
                CompletableFuture<Void> ended = new CompletableFuture<>();
                pending.accept(ended);
                call = call.doFinally(signal -> ended.complete(null));
            }
            call.subscribe(new CancelThroughBody(caller, body));
        }).singleOrEmpty();
    }

    /** A {@code Flow} whose collections each take the lock ({@link LockedFlow}). */
    static Flow<Object> flowCall(Function<ReactiveQueueLockedInvocation.CallShape, Flux<Object>> locked) {
        return LockedFlow.flow(locked);
    }

    /**
     * Passes the call's signals to its caller; the caller's cancellation cancels the body's coroutine, not the
     * call, once the body's publisher is subscribed and asked for its value; before that no code of the body can
     * have run, and the call is cancelled.
     */
    private static final class CancelThroughBody implements CoreSubscriber<Object>, Subscription {

        private final Subscriber<? super Object> caller;
        private final CoroutineBody body;
        private volatile Subscription call;
        private volatile boolean callerGone;
        /** A Mono's coroutine starts at the first request: before it, no code of the body can have run. */
        private volatile boolean requested;

        CancelThroughBody(Subscriber<? super Object> caller, CoroutineBody body) {
            this.caller = caller;
            this.body = body;
        }

        @Override
        public Context currentContext() {
            return caller instanceof CoreSubscriber<?> core ? core.currentContext() : Context.empty();
        }

        @Override
        public void onSubscribe(Subscription subscription) {
            call = subscription;
            caller.onSubscribe(this);
        }

        @Override
        public void onNext(Object value) {
            if (!callerGone) {
                caller.onNext(value);
            }
        }

        @Override
        public void onError(Throwable failure) {
            if (!callerGone) {
                caller.onError(failure);
            }
        }

        @Override
        public void onComplete() {
            if (!callerGone) {
                caller.onComplete();
            }
        }

        @Override
        public void request(long n) {
            requested = true;
            call.request(n);
        }

        @Override
        public void cancel() {
            callerGone = true;
            if (!requested || !body.cancelIfStarted()) {
                call.cancel(); // still waiting, or granted but not yet started: no code of the body has run
            }
        }
    }

    /** A suspend function's arguments, its continuation replaced by one whose context carries this element. */
    @Override
    @SuppressWarnings("unchecked")
    public Object[] arguments(Object[] arguments) {
        Object[] copy = arguments.clone();
        Continuation<Object> caller = (Continuation<Object>) copy[copy.length - 1];
        outer = caller.getContext().get(KEY);
        CoroutineContext context = caller.getContext().plus(this);
        copy[copy.length - 1] = new Continuation<Object>() {
            @Override
            public CoroutineContext getContext() {
                return context;
            }

            @Override
            public void resumeWith(Object result) {
                caller.resumeWith(result);
            }
        };
        return copy;
    }

    /**
     * The caller cancelled: cancels the body's coroutine and returns {@code true} if the body's publisher was
     * subscribed (the coroutine's end then ends the call; one that has not run yet is cancelled as it starts, and
     * may run up to its first suspension point, inside the lock), else {@code false}, and the caller must cancel
     * the subscription (no code of the body has run).
     */
    boolean cancelIfStarted() {
        Object seen = state.getAndUpdate(current -> current == null ? CANCELLED : current);
        if (seen == null) {
            return false;
        }
        cancelled = true;
        if (state.get() instanceof Job job) { // else updateThreadContext sees `cancelled` as the coroutine starts
            job.cancel((CancellationException) null);
        }
        return true;
    }

    /**
     * The body's publisher (a suspend function's {@code Mono}), run as {@link #untilEnded}: once the caller has
     * cancelled, its end (the cancellation's error) is passed on only when every coroutine it started has ended,
     * so the lock is released then.
     */
    @Override
    @SuppressWarnings("unchecked")
    public Publisher<Object> body(Object returned, BooleanSupplier usable) {
        return untilEnded(Flux.defer(() -> state.compareAndSet(null, SUBSCRIBED)
                ? Flux.from((Publisher<Object>) returned)
                : Flux.error(new CancellationException("The caller cancelled before the body started"))));
    }

    /**
     * {@code body} (run by coroutines with this element), ending, however it ends, only once every coroutine and
     * {@code @QueueLocked} call seen has: the lock is released then.
     */
    Flux<Object> untilEnded(Publisher<Object> body) {
        return Flux.from(body)
                // Seen by the coroutine as its Reactor context: the @QueueLocked calls it makes report themselves
                // here as they are subscribed.
                .contextWrite(context -> context.put(PENDING_CALLS, (Consumer<CompletionStage<?>>) this::track))
                .onErrorResume(failure -> Mono.defer(this::ended).then(Mono.error(failure)))
                .concatWith(Mono.defer(this::ended).then(Mono.empty()));
    }

    /**
     * Completes when every coroutine seen has ended: after a cancel the body's own may still be in a blocking step,
     * and a body that gave up on a proxied call (a time-out, a cancelled child) and returned leaves that call's
     * coroutine running without a parent.
     */
    private Mono<Void> ended() {
        List<Mono<Void>> waits = new ArrayList<>();
        coroutines.stream().filter(job -> !job.isCompleted()).forEach(job -> waits.add(Mono.create(sink ->
                job.invokeOnCompletion(cause -> {
                    sink.success();
                    return Unit.INSTANCE;
                }))));
        calls.stream().filter(call -> !call.isDone()).forEach(call ->
                waits.add(Mono.fromFuture(call, true).onErrorResume(failure -> Mono.empty()).then()));
        // A call waited for may start coroutines of its own, seen meanwhile: look again until nothing is left.
        return waits.isEmpty() ? Mono.empty() : Mono.when(waits).then(Mono.defer(this::ended));
    }

    /**
     * A {@code @QueueLocked} call made in the body, as it is subscribed: its coroutine may start only after the
     * caller's cancel, and then runs its first segment anyway, so the body waits for the call to end.
     */
    private void track(CompletionStage<?> ended) {
        CompletableFuture<?> call = ended.toCompletableFuture();
        if (calls.add(call)) {
            call.whenComplete((result, failure) -> calls.remove(call));
        }
    }

    /**
     * Records a coroutine without a parent (the body's own, one Spring runs for a proxied suspend call): their
     * children end before them, and a coroutine with a parent elsewhere (an application scope, a {@code Job()} of
     * its own) was detached on purpose and is not waited for. Forgotten once it has ended.
     */
    private static void record(CoroutineBody element, Job job) {
        if (element.coroutines.add(job)) {
            job.invokeOnCompletion(cause -> {
                element.coroutines.remove(job);
                return Unit.INSTANCE;
            });
        }
    }

    @Override
    public Object updateThreadContext(CoroutineContext context) {
        Job job = context.get(Job.Key);
        if (job == null) {
            return null;
        }
        state.compareAndSet(SUBSCRIBED, job); // the body's coroutine (the first to run with this element)
        if (cancelled) {
            job.cancel((CancellationException) null); // the caller cancelled as it started: stop it early
        }
        if (job.getParent() == null) {
            for (CoroutineBody element = this; element != null; element = element.outer) {
                record(element, job);
            }
        }
        return null;
    }

    @Override
    public void restoreThreadContext(CoroutineContext context, Object oldState) {
        // Nothing set on the thread.
    }

    @Override
    public Key<?> getKey() {
        return KEY;
    }

    @Override
    public <E extends Element> E get(Key<E> key) {
        return ThreadContextElement.DefaultImpls.get(this, key);
    }

    @Override
    public <R> R fold(R initial, Function2<? super R, ? super Element, ? extends R> operation) {
        return ThreadContextElement.DefaultImpls.fold(this, initial, operation);
    }

    @Override
    public CoroutineContext minusKey(Key<?> key) {
        return ThreadContextElement.DefaultImpls.minusKey(this, key);
    }

    @Override
    public CoroutineContext plus(CoroutineContext context) {
        return ThreadContextElement.DefaultImpls.plus(this, context);
    }
}
