package io.dynamolock.annotation;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockLostException;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.NamedThreadLocal;
import org.springframework.expression.EvaluationException;

/**
 * Runs a {@link QueueLocked} method holding its lock: evaluates the entity, acquires
 * through the {@link LockTemplate}, proceeds, and releases however the method ends, or,
 * for a method returning {@code CompletableFuture} / {@code CompletionStage}, when the
 * future completes. A lease lost meanwhile is handled as the {@link LostLeasePolicy} says.
 */
public final class QueueLockedInterceptor implements MethodInterceptor {

    private static final Logger log = LoggerFactory.getLogger(QueueLockedInterceptor.class);

    /**
     * The locks this thread holds through {@code @QueueLocked} methods that are running now, innermost
     * last. Only an asynchronous method needs it: it does not register its lock with the thread (the
     * lock outlives the call, so a later call of the same thread must queue, not join), so it looks
     * here to join a lock the thread holds through an enclosing synchronous method.
     */
    private static final ThreadLocal<Deque<ThreadHold>> running = new NamedThreadLocal<>("@QueueLocked holds");

    private record ThreadHold(String entity, String namespace, boolean joinable) {
    }

    private final QueueLockedMethods methods;
    private final Supplier<LockTemplate> lockTemplate;
    private final Supplier<LostLeasePolicy> lostLeasePolicy;

    QueueLockedInterceptor(QueueLockedMethods methods, Supplier<LockTemplate> lockTemplate,
            Supplier<LostLeasePolicy> lostLeasePolicy) {
        this.methods = methods;
        this.lockTemplate = lockTemplate;
        this.lostLeasePolicy = lostLeasePolicy;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        Class<?> targetClass = target != null ? AopUtils.getTargetClass(target) : null;
        LockedMethod locked = methods.get(invocation.getMethod(), targetClass);
        if (locked == null) {
            return invocation.proceed();
        }
        LockTemplate locks = lockTemplate.get();
        String entity = entity(locked, invocation, targetClass);
        String namespace = locked.namespace() != null ? locked.namespace() : locks.defaultNamespace();
        LockRequest.Builder request = LockRequest.builder(entity).namespace(namespace);
        if (locked.maxWait() != null) {
            request.wait(locked.maxWait());
        }
        if (locked.lease() != null) {
            request.lease(locked.lease());
        }
        if (find(entity, namespace, false) != null && find(entity, namespace, true) == null) {
            throw new IllegalStateException("@QueueLocked method " + locked.description() + " needs lock entity='"
                    + entity + "' namespace='" + namespace + "', which this thread holds for an enclosing method"
                    + " returning a CompletableFuture. That lock is released only after the enclosing method has"
                    + " returned and its future completed, so waiting for it here would never end; call this"
                    + " method from the future's work instead");
        }
        return locked.async()
                ? invokeAsync(invocation, locked, locks, request, entity, namespace)
                : invokeSync(invocation, locked, locks, request.build(), entity, namespace);
    }

    private Object invokeSync(MethodInvocation invocation, LockedMethod locked, LockTemplate locks,
            LockRequest request, String entity, String namespace) throws Throwable {
        LockHandle lock = locks.acquire(request);
        Object result = proceed(invocation, locked, lock, new ThreadHold(entity, namespace, true));
        finish(lock, locked, null);
        return result;
    }

    private Object invokeAsync(MethodInvocation invocation, LockedMethod locked, LockTemplate locks,
            LockRequest.Builder request, String entity, String namespace) throws Throwable {
        // Join only a lock an enclosing synchronous @QueueLocked method of this thread holds; never register
        // the thread as holder, as it goes on to other work while the future runs.
        boolean join = find(entity, namespace, true) != null;
        LockHandle lock = locks.acquire(request.reentrant(join).build());
        Object returned = proceed(invocation, locked, lock, new ThreadHold(entity, namespace, false));
        if (returned == null) {
            finish(lock, locked, null);
            return null;
        }
        CompletableFuture<Object> result = new CompletableFuture<>();
        ((CompletionStage<?>) returned).whenComplete((value, failure) -> {
            try {
                finish(lock, locked, failure);
            }
            catch (RuntimeException | Error ex) {
                result.completeExceptionally(ex);
                return;
            }
            if (failure != null) {
                result.completeExceptionally(failure);
            }
            else {
                result.complete(value);
            }
        });
        return result;
    }

    /** Runs the method, known to this thread as {@code hold}; releases the lock if it throws. */
    private Object proceed(MethodInvocation invocation, LockedMethod locked, LockHandle lock, ThreadHold hold)
            throws Throwable {
        push(hold);
        try {
            return invocation.proceed();
        }
        catch (Throwable ex) {
            finish(lock, locked, ex);
            throw ex;
        }
        finally {
            pop();
        }
    }

    private String entity(LockedMethod locked, MethodInvocation invocation, Class<?> targetClass) {
        Object value;
        try {
            value = methods.evaluator().evaluate(locked.entity(), locked.method(), invocation.getArguments(),
                    invocation.getThis(), targetClass);
        }
        catch (EvaluationException ex) {
            throw new IllegalArgumentException("@QueueLocked entity expression '" + locked.entitySource() + "' of "
                    + locked.description() + " could not be evaluated: " + ex.getMessage()
                    + ". No lock was taken and the method did not run", ex);
        }
        String entity = value == null ? null : value.toString();
        if (entity == null || entity.isBlank()) {
            throw new IllegalArgumentException("@QueueLocked entity expression '" + locked.entitySource() + "' of "
                    + locked.description() + " evaluated to " + (entity == null ? "null" : "'" + entity + "'")
                    + "; a lock needs a non-blank entity. No lock was taken and the method did not run");
        }
        return entity;
    }

    /**
     * Releases the lock, checking first whether its lease was lost during the call.
     *
     * @param failure what the method threw, or {@code null}
     * @throws LockLostException if the lease was lost, the method did not throw and the policy is FAIL
     */
    private void finish(LockHandle lock, LockedMethod locked, Throwable failure) {
        boolean lost = !lock.isValid();
        lock.release();
        if (!lost) {
            return;
        }
        LockLostException ex = new LockLostException("The lease of lock entity='" + lock.entity() + "' namespace='"
                + lock.namespace() + "' (fencing token " + lock.fencingToken() + ") was lost while "
                + locked.description() + " ran: its work was not protected by the lock from then on");
        if (failure != null) {
            failure.addSuppressed(ex);
        }
        else if (lostLeasePolicy.get() == LostLeasePolicy.FAIL) {
            throw ex;
        }
        else {
            log.warn("{} (dynamolock.on-lost-lease=log)", ex.getMessage());
        }
    }

    private static ThreadHold find(String entity, String namespace, boolean joinable) {
        Deque<ThreadHold> holds = running.get();
        if (holds == null) {
            return null;
        }
        for (ThreadHold hold : holds) {
            if (hold.joinable() == joinable && hold.entity().equals(entity) && hold.namespace().equals(namespace)) {
                return hold;
            }
        }
        return null;
    }

    private static void push(ThreadHold hold) {
        Deque<ThreadHold> holds = running.get();
        if (holds == null) {
            holds = new ArrayDeque<>(4);
            running.set(holds);
        }
        holds.addLast(hold);
    }

    private static void pop() {
        Deque<ThreadHold> holds = running.get();
        holds.removeLast();
        if (holds.isEmpty()) {
            running.remove();
        }
    }
}
