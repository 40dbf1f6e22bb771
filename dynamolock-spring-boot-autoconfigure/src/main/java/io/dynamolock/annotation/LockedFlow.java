package io.dynamolock.annotation;

import io.dynamolock.core.LockLostException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import kotlin.Result;
import kotlin.ResultKt;
import kotlin.Unit;
import kotlin.coroutines.Continuation;
import kotlin.coroutines.CoroutineContext;
import kotlin.coroutines.intrinsics.IntrinsicsKt;
import kotlin.coroutines.jvm.internal.ContinuationImpl;
import kotlinx.coroutines.BuildersKt;
import kotlinx.coroutines.CoroutineScope;
import kotlinx.coroutines.CoroutineScopeKt;
import kotlinx.coroutines.Job;
import kotlinx.coroutines.NonCancellable;
import kotlinx.coroutines.flow.Flow;
import kotlinx.coroutines.flow.FlowCollector;
import kotlinx.coroutines.flow.FlowKt;
import kotlinx.coroutines.future.FutureKt;
import kotlinx.coroutines.reactor.ReactorContext;
import org.reactivestreams.Publisher;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

/**
 * What a {@code @QueueLocked} method returning a Kotlin {@code Flow} returns ({@link #flow}): each collection takes
 * the lock in the collecting coroutine and collects the method's flow there, holding it.
 *
 * <p>Not through a {@code Flux} and back: that bridge buffers, so the body would run ahead of the collector (a
 * {@code first()} would make it produce a whole buffer) and end, releasing the lock, while the collector still
 * works on earlier elements, and it would run on a Reactor thread instead of in the collector's context. Here the
 * method's flow runs in the collector's coroutine, its elements going straight to the collector (an {@code emit}
 * returns once the collector's block has), so the lock is held until the collection is over.
 *
 * <p>The lock is still taken, held and released by the same Reactor pipeline as for a {@code Mono}
 * ({@code ReactiveQueueLockedInvocation}: the wait, its time-out message and {@code SKIP}, {@code minHold}, the
 * lost-lease policy), subscribed with the collector's Reactor context (so a collection inside a hold of the lock
 * joins it), and given a body that ends when the collection does. The flow runs with the lock's scope in its
 * {@code ReactorContext} ({@code flowOn}, which without a dispatcher of its own changes no thread and adds no
 * buffer; the collector's block keeps its own context, as a flow's context preservation demands), where nested
 * {@code @QueueLocked} calls and {@code withLock} find it, and with a {@link CoroutineBody} that sees the proxied
 * calls it makes, which the release waits for, as for a suspend function.
 */
final class LockedFlow {

    private final Function<ReactiveQueueLockedInvocation.CallShape, Flux<Object>> locked;

    private LockedFlow(Function<ReactiveQueueLockedInvocation.CallShape, Flux<Object>> locked) {
        this.locked = locked;
    }

    /**
     * Made by kotlinx's {@code flow} builder, as kotlinx asks (its {@code Flow} is not meant to be implemented
     * elsewhere), which also checks that elements reach the collector in its own context.
     */
    static Flow<Object> flow(Function<ReactiveQueueLockedInvocation.CallShape, Flux<Object>> locked) {
        return FlowKt.<Object>flow(new LockedFlow(locked)::collect);
    }

    private Object collect(FlowCollector<? super Object> collector, Continuation<? super Unit> caller) {
        // Its first step runs in this call, as a compiled suspend function's does; later ones as it is resumed.
        return new Collecting(collector, caller).invokeSuspend(Unit.INSTANCE);
    }

    /** The method's flow, the lock's Reactor context, and whether the lock may still be used, once granted. */
    private record Grant(Flow<Object> flow, CoroutineContext context, BooleanSupplier usable) {
    }

    /**
     * One collection, written as the state machine a Kotlin {@code suspend fun} compiles to: wait for the grant,
     * collect the method's flow, then, however that ended, end the body and wait for the release. It extends their
     * base class, {@link ContinuationImpl} (internal to Kotlin, yet every compiled suspend function depends on it),
     * because a plain {@code Continuation} is not intercepted: it would resume, and run the flow, on whatever thread
     * completed the await, outside the collector's dispatcher and thread context elements.
     */
    @SuppressWarnings("unchecked")
    private final class Collecting extends ContinuationImpl implements ReactiveQueueLockedInvocation.CallShape {

        private static final int WAITING = 0;
        private static final int GRANTED = 1;
        private static final int COLLECTED = 2;
        private static final int RELEASED = 3;

        /** Set in place of the collection's job once the body was cancelled: the collection must not start. */
        private static final Object STOPPED = new Object();

        private final FlowCollector<? super Object> collector;
        private final CoroutineBody element;
        /** The grant, or {@code null} if the call ended without one (skipped, or the method returned null). */
        private final CompletableFuture<Grant> granted = new CompletableFuture<>();
        /** Completed as the collection ends: the body's end, after which the lock is released. */
        private final CompletableFuture<Object> collected = new CompletableFuture<>();
        /** The call's end, after the release: {@code null} or its error (a value, not a failed future: see below). */
        private final CompletableFuture<Throwable> released = new CompletableFuture<>();
        /** The job of the collection once it runs, or {@link #STOPPED}. */
        private final AtomicReference<Object> collection = new AtomicReference<>();
        private int label = WAITING;
        private Disposable call;
        private Grant grant;
        private Throwable failure;

        Collecting(FlowCollector<? super Object> collector, Continuation<? super Unit> caller) {
            super((Continuation<Object>) caller);
            this.collector = collector;
            this.element = CoroutineBody.collecting(caller.getContext());
        }

        @Override
        protected Object invokeSuspend(Object result) {
            Object outcome = result;
            while (outcome != IntrinsicsKt.getCOROUTINE_SUSPENDED()) {
                switch (label) {
                    case WAITING -> {
                        label = GRANTED;
                        CompletableFuture<Grant> grant = subscribe();
                        outcome = suspending(() -> FutureKt.await(grant, this));
                    }
                    case GRANTED -> {
                        if (outcome instanceof Result.Failure) {
                            call.dispose(); // cancelled while waiting: the entry leaves the queue
                        }
                        ResultKt.throwOnFailure(outcome); // timed out, or the method failed: nothing to collect
                        if (outcome == null) {
                            return Unit.INSTANCE; // skipped, or the method returned no flow
                        }
                        grant = (Grant) outcome;
                        label = COLLECTED;
                        outcome = suspending(() -> CoroutineScopeKt.<Unit>coroutineScope(this::collectHolding, this));
                    }
                    case COLLECTED -> {
                        failure = outcome instanceof Result.Failure failed ? failed.exception : null;
                        label = RELEASED;
                        // Not cancellable: a cancelled collector goes on only once the lock is released.
                        outcome = suspending(() -> BuildersKt.<Throwable>withContext(NonCancellable.INSTANCE,
                                this::release, this));
                    }
                    default -> {
                        ResultKt.throwOnFailure(outcome);
                        return outcome((Throwable) outcome);
                    }
                }
            }
            return outcome;
        }

        /** The lock's call, with the collector's Reactor context (joining a hold it carries); awaits its grant. */
        private CompletableFuture<Grant> subscribe() {
            ReactorContext reactor = getContext().get(ReactorContext.Key);
            call = locked.apply(this).subscribe(null, this::ended, () -> ended(null),
                    reactor == null ? Context.empty() : reactor.getContext());
            return granted;
        }

        private void ended(Throwable end) {
            if (end == null) {
                granted.complete(null);
            }
            else {
                granted.completeExceptionally(end);
            }
            released.complete(end);
        }

        /** The arguments as given: the method only makes the flow, which runs in the collector's coroutine. */
        @Override
        public Object[] arguments(Object[] given) {
            return given;
        }

        /**
         * The lock's body: hands the flow and the lock's Reactor context to the collection, and ends when the
         * collection has (with its error, so that the release is the one of a failed body), or once the coroutines
         * it left behind have ended. Cancelled (the lease lost), it cancels the collection.
         */
        @Override
        public Publisher<Object> body(Object returned, BooleanSupplier usable) {
            return element.untilEnded(Mono.deferContextual(context -> granted.complete(
                            new Grant((Flow<Object>) returned, new ReactorContext(context).plus(element), usable))
                    ? Mono.fromFuture(collected, true).doOnCancel(this::stop)
                    : Mono.empty())); // the collector was cancelled as the grant came in: no code ran, release
        }

        /** The method's flow, emitting straight to the collector, in a scope that a lost lease cancels. */
        private Object collectHolding(CoroutineScope scope, Continuation<? super Unit> continuation) {
            Job job = scope.getCoroutineContext().get(Job.Key);
            // The lease was lost before the collection started: none of the flow's code may run. Asked of the lock
            // too, since the cancel that stops the collection may come after others heard of the loss.
            if (!collection.compareAndSet(null, job) || !grant.usable().getAsBoolean()) {
                throw lost();
            }
            return FlowKt.emitAll(collector, FlowKt.flowOn(grant.flow(), grant.context()), continuation);
        }

        private void stop() {
            if (collection.getAndSet(STOPPED) instanceof Job job) {
                job.cancel(lost());
            }
        }

        private static CancellationException lost() {
            return new CancellationException("The lease of the lock was lost");
        }

        /** Ends the body, then waits for the release and the call's end. */
        private Object release(CoroutineScope scope, Continuation<? super Throwable> continuation) {
            if (failure == null) {
                collected.complete(null);
            }
            else {
                collected.completeExceptionally(failure);
            }
            // A failed future would be resumed with a copy of its error (kotlinx's stack trace recovery), which
            // could then no longer be told from the collection's own failure.
            return FutureKt.await(released, continuation);
        }

        /**
         * How the collection ends, given the call's {@code end}: as the collection did, unless the call failed
         * otherwise (a lost lease: it cancelled the collection, or is added to the collection's own error).
         */
        private Object outcome(Throwable end) {
            Throwable thrown = failure;
            if (end != null && end != thrown) {
                if (thrown == null || thrown instanceof CancellationException) {
                    thrown = end;
                }
                else {
                    thrown.addSuppressed(end);
                }
            }
            if (thrown != null) {
                thrown = LockLostException.escapingWork(thrown); // the flow ran: never "not granted" to the collector
                ResultKt.throwOnFailure(ResultKt.createFailure(thrown)); // a checked one too, as Kotlin does
            }
            return Unit.INSTANCE;
        }

        /** A suspend call's result, or its error as a failed {@code Result}, as it would be resumed with. */
        private static Object suspending(Supplier<Object> call) {
            try {
                return call.get();
            }
            catch (Throwable failure) {
                return ResultKt.createFailure(failure);
            }
        }
    }
}
