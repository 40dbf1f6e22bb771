package io.dynamolock.annotation;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockLostException;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.expression.EvaluationException;

/**
 * Runs a {@link QueueLocked} method holding its lock: evaluates the entity, builds a
 * {@link LockRequest} and hands the call to the {@link LockTemplate}, as spring-retry's
 * interceptor hands it to a {@code RetryTemplate}. A synchronous method runs inside
 * {@code execute}; a method returning {@code CompletableFuture} / {@code CompletionStage}
 * runs with its lock in scope and keeps it until the future completes. Re-entry is the
 * template's: calls made inside the method's scope join its lock. A lease lost meanwhile
 * is handled as the {@link LostLeasePolicy} says.
 */
public final class QueueLockedInterceptor implements MethodInterceptor {

    private static final Logger log = LoggerFactory.getLogger(QueueLockedInterceptor.class);

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
        LockRequest request = request(locked, invocation, targetClass);
        if (!locked.async()) {
            return locks.execute(request, lock -> proceed(invocation, locked, lock));
        }
        LockHandle lock = locks.acquire(request);
        Object returned;
        try {
            returned = locks.inScope(lock, held -> invocation.proceed());
        }
        catch (Throwable ex) {
            finish(lock, locked, ex);
            throw ex;
        }
        return returned == null ? finish(lock, locked, null) : releaseOnCompletion((CompletionStage<?>) returned, lock, locked);
    }

    private LockRequest request(LockedMethod locked, MethodInvocation invocation, Class<?> targetClass) {
        LockRequest.Builder request = LockRequest.builder(entity(locked, invocation, targetClass))
                .namespace(locked.namespace())
                .failClosed(locked.failClosed());
        if (locked.maxWait() != null) {
            request.wait(locked.maxWait());
        }
        if (locked.lease() != null) {
            request.lease(locked.lease());
        }
        return request.build();
    }

    private Object proceed(MethodInvocation invocation, LockedMethod locked, LockHandle lock) throws Throwable {
        Object result;
        try {
            result = invocation.proceed();
        }
        catch (Throwable ex) {
            reportLoss(lock, locked, ex);
            throw ex;
        }
        reportLoss(lock, locked, null);
        return result;
    }

    /** The caller's future completes after the lock was released, with the method's outcome. */
    private CompletableFuture<Object> releaseOnCompletion(CompletionStage<?> returned, LockHandle lock,
            LockedMethod locked) {
        CompletableFuture<Object> result = new CompletableFuture<>();
        returned.whenComplete((value, failure) -> {
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

    /** Reports a lost lease, then releases the lock; returns {@code null} for the caller's convenience. */
    private Object finish(LockHandle lock, LockedMethod locked, Throwable failure) {
        try {
            reportLoss(lock, locked, failure);
        }
        finally {
            lock.release();
        }
        return null;
    }

    /**
     * Checks, before the release, whether the lease was lost during the call.
     *
     * @param failure what the method threw, or {@code null}
     * @throws LockLostException if the lease was lost, the method did not throw and the policy is FAIL
     */
    private void reportLoss(LockHandle lock, LockedMethod locked, Throwable failure) {
        if (lock.isValid()) {
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
}
