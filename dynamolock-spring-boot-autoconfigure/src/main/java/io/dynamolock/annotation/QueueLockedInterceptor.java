package io.dynamolock.annotation;

import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockLostException;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockOperations;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.LockWaitTimeoutException;
import io.dynamolock.core.internal.Printable;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.AnnotationTransactionAttributeSource;
import org.springframework.transaction.interceptor.TransactionAttribute;
import org.springframework.transaction.interceptor.TransactionAttributeSource;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.util.ClassUtils;
import org.springframework.util.ObjectUtils;
import org.springframework.expression.EvaluationException;

/**
 * Runs a {@link QueueLocked} method holding its lock: evaluates the entity, builds a
 * {@link LockRequest} and hands the call to the {@link LockOperations} (the {@code LockTemplate}), as spring-retry's
 * interceptor hands it to a {@code RetryTemplate}: acquire, run the method with the lock in
 * the thread's scope ({@code inScope}: calls made inside it join the lock), release when the
 * method returns or, for a method returning {@code CompletableFuture} / {@code CompletionStage}
 * (declared, or a {@code CompletableFuture} or a minimal stage returned through {@code Object} or a type variable),
 * when its future completes; with a {@code minHold}, no earlier than that after the grant. A
 * wait that runs out fails the call or, with {@link WaitTimeoutPolicy#SKIP}, skips it. A lease
 * lost meanwhile is handled as the {@link LostLeasePolicy} says.
 */
public final class QueueLockedInterceptor implements MethodInterceptor {

    private static final Logger log = LoggerFactory.getLogger(QueueLockedInterceptor.class);

    static final Duration SKIP_WARNING_INTERVAL = Duration.ofMinutes(1);

    /** The class of {@code CompletableFuture.minimalCompletionStage()}, which is not public. */
    private static final Class<?> MINIMAL_STAGE = new CompletableFuture<>().minimalCompletionStage().getClass();

    static final String TRANSACTION_SYNCHRONIZATION =
            "org.springframework.transaction.support.TransactionSynchronizationManager";

    private final QueueLockedMethods methods;
    private final Supplier<LockTemplate> lockOperations;
    private final Supplier<LostLeasePolicy> lostLeasePolicy;
    private final Consumer<QueueLockedSkippedEvent> skips;
    /** Whether spring-tx is there, to tell a transaction the caller began. */
    private final boolean transactions = ClassUtils.isPresent(TRANSACTION_SYNCHRONIZATION,
            QueueLockedInterceptor.class.getClassLoader());
    /** The methods warned about being called inside their caller's transaction (once each). */
    private final Set<LockedMethod> warnedInTransaction = ConcurrentHashMap.newKeySet();
    /** When each method last warned of a skip that will recur (one entry per locked method). */
    private final Map<LockedMethod, AtomicLong> skipWarnings = new ConcurrentHashMap<>();
    /**
     * The Mono, Flux and suspend path; created on first use, so that reactor-core is needed only then, and without
     * a lock, which could park an event loop (a second copy would be harmless).
     */
    private volatile ReactiveQueueLockedInvocation reactive;

    QueueLockedInterceptor(QueueLockedMethods methods, Supplier<LockTemplate> lockOperations,
            Supplier<LostLeasePolicy> lostLeasePolicy, Consumer<QueueLockedSkippedEvent> skips) {
        this.methods = methods;
        this.lockOperations = lockOperations;
        this.lostLeasePolicy = lostLeasePolicy;
        this.skips = skips;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        Class<?> targetClass = target != null ? AopUtils.getTargetClass(target) : null;
        // The method's declaration, its type variables and its description as the start judged them (a repository
        // interface the target does not implement); #root.targetClass and @Transactional stay the target's.
        Class<?> judgedBy = CalledTypes.ofCall(invocation, targetClass);
        LockedMethod locked = methods.get(invocation.getMethod(), judgedBy);
        if (locked == null) {
            return invocation.proceed();
        }
        LockTemplate locks = lockOperations.get();
        LockRequest request;
        try {
            request = request(locked, invocation, targetClass);
        }
        catch (RuntimeException refused) {
            // A Mono, Flux or Flow reports it as its error; the others throw it, as they throw a wait time-out.
            if (locked.reactive()) {
                return reactive().refused(locked, refused);
            }
            throw refused;
        }
        if (locked.reactive()) {
            return reactive().invoke(invocation, locked, request, judgedBy);
        }
        warnIfInCallersTransaction(locks, locked, request, targetClass);
        LockHandle lock;
        try {
            lock = locks.acquire(request);
        }
        catch (LockWaitTimeoutException busy) {
            if (locked.onWaitTimeout() != WaitTimeoutPolicy.SKIP) {
                throw busy;
            }
            return skip(locked, busy);
        }
        long grantedAt = System.nanoTime();
        Object returned;
        try {
            returned = locks.inScope(lock, held -> invocation.proceed());
        }
        catch (Throwable ex) {
            finish(lock, locked, grantedAt, ex);
            throw ex;
        }
        try {
            if (locked.async() && returned != null) {
                return releaseOnCompletion((CompletionStage<?>) returned, lock, locked, grantedAt, judgedBy);
            }
            if (QueueLockedMethods.isUnfinishedWork(returned, judgedBy)) {
                return followUndeclared(returned, lock, locked, grantedAt, judgedBy);
            }
            IllegalStateException bodyLeftRunning = QueueLockedMethods.unfinishedBody(returned, locked, judgedBy);
            if (bodyLeftRunning != null) {
                throw bodyLeftRunning;
            }
        }
        catch (Throwable ex) {
            // Nothing follows the lock: unreleased, the template would renew it for good. Any throwable: Kotlin, or a
            // sneaky throw, gets a checked exception past the compiler.
            finish(lock, locked, grantedAt, ex);
            throw ex;
        }
        finish(lock, locked, grantedAt, null);
        return returned;
    }

    /**
     * Work still running that the method returned through a type the start could not refuse or follow ({@code Object},
     * a type variable). A {@code CompletableFuture} is followed as a declared one is, and so is a minimal stage
     * ({@code minimalCompletionStage()}); the caller gets one of the same class back, completing after the release.
     * Anything else would run after the release: the call fails, the lock released, and a publisher is
     * not subscribed. So does another {@code CompletionStage}, a subclass of {@code CompletableFuture} too (Lettuce's
     * {@code RedisFuture}): the caller may use it as its own class, which a future of ours is not, and a release
     * hung on the instance itself could run after the caller saw it complete, and could not fail it on a lost lease.
     */
    private Object followUndeclared(Object returned, LockHandle lock, LockedMethod locked, long grantedAt,
            Class<?> targetClass) {
        if (returned.getClass() == CompletableFuture.class) {
            return releaseOnCompletion((CompletableFuture<?>) returned, lock, locked, grantedAt, targetClass);
        }
        if (returned.getClass() == MINIMAL_STAGE) {
            return releaseOnCompletion((CompletionStage<?>) returned, lock, locked, grantedAt, targetClass)
                    .minimalCompletionStage();
        }
        throw QueueLockedMethods.undeclaredLaterWork(locked, returned.getClass());
    }

    /**
     * This advisor runs outside the method's own {@code @Transactional}, so a transaction active here is one its
     * caller began: the lock is released when the method returns, before that transaction commits, and the next
     * holder may read the state before this method's writes are committed. Holding the lock until the commit instead
     * was tried and dropped: it makes transactions that lock in different orders wait for each other, and calls in a
     * suspended transaction's scope wait behind their own hold. So the method is named once, with the fix.
     */
    private void warnIfInCallersTransaction(LockTemplate locks, LockedMethod locked, LockRequest request,
            Class<?> targetClass) {
        if (!transactions || !TransactionSynchronizationManager.isActualTransactionActive()
                || warnedInTransaction.contains(locked) || OwnTransaction.apartFromCallers(locked.method(), targetClass)
                || joins(locks, request)) {
            return;
        }
        if (warnedInTransaction.add(locked)) {
            log.warn("{} was called inside a transaction its caller began: its lock is released when it returns,"
                    + " before that transaction commits, so the next holder may read the state before this call's"
                    + " writes are committed and overwrite them. Lock the method that begins the transaction (put"
                    + " @QueueLocked on it), or call this one outside any transaction so that its own @Transactional"
                    + " begins inside the lock", locked.description());
        }
    }

    /**
     * Whether the thread's scope holds every entity of {@code request} in its namespace: the call joins that hold. No
     * namespace is the template's default one, not any: a hold of the entity in another namespace is another lock.
     */
    private static boolean joins(LockTemplate locks, LockRequest request) {
        String namespace = request.namespace() != null ? request.namespace() : locks.defaultNamespace();
        List<LockHandle> parts = locks.currentScope().locks().stream().flatMap(held -> held.parts().stream())
                .filter(LockHandle::isValid).toList();
        return request.entities().stream().allMatch(entity -> parts.stream().anyMatch(part ->
                part.entity().equals(entity) && part.namespace().equals(namespace)));
    }

    /** spring-tx's reading of a method's own {@code @Transactional}; loaded only with spring-tx there. */
    private static final class OwnTransaction {

        // Not only public methods: a class-based proxy applies @Transactional to protected and package-private ones
        // too.
        private static final TransactionAttributeSource ATTRIBUTES = new AnnotationTransactionAttributeSource(false);

        /** Whether the method commits its writes apart from its caller's transaction, inside the lock. */
        static boolean apartFromCallers(Method method, Class<?> targetClass) {
            TransactionAttribute attribute = ATTRIBUTES.getTransactionAttribute(method, targetClass);
            int propagation = attribute == null ? TransactionDefinition.PROPAGATION_REQUIRED
                    : attribute.getPropagationBehavior();
            return propagation == TransactionDefinition.PROPAGATION_REQUIRES_NEW
                    || propagation == TransactionDefinition.PROPAGATION_NOT_SUPPORTED
                    || propagation == TransactionDefinition.PROPAGATION_NEVER;
        }
    }

    private ReactiveQueueLockedInvocation reactive() {
        ReactiveQueueLockedInvocation created = reactive;
        if (created == null) {
            created = new ReactiveQueueLockedInvocation(lockOperations,
                    () -> lostLeasePolicy.get() == LostLeasePolicy.FAIL, this::skip);
            reactive = created;
        }
        return created;
    }

    /**
     * A busy lock and {@link WaitTimeoutPolicy#SKIP}: one DEBUG line and an event, no error. Unless the wait's
     * exception has advice ({@link LockWaitTimeoutException#hint()}: a fail-closed holder that stopped renewing and
     * never expires, or a caller that waited behind its own hold): then the lock will not free by itself and every
     * later call would skip as well, so it is a WARN with the advice, at most once per {@link #SKIP_WARNING_INTERVAL}
     * per method, as a job may tick every second.
     */
    Object skip(LockedMethod locked, LockWaitTimeoutException busy) {
        if (busy.hint() != null && warningDue(locked)) {
            log.warn("Skipped {}: {}", locked.description(), busy.getMessage());
        }
        else {
            log.debug("Skipped {}: lock entity='{}' namespace='{}' is busy ({} ahead after {} ms)",
                    locked.description(), Printable.escape(busy.entity()), Printable.escape(busy.namespace()),
                    busy.position(), busy.waited().toMillis());
        }
        skips.accept(new QueueLockedSkippedEvent(this, locked.description(), busy.entity(), busy.namespace(),
                busy.waited()));
        return locked.async() ? CompletableFuture.completedFuture(null) : null;
    }

    private boolean warningDue(LockedMethod locked) {
        long now = System.nanoTime();
        AtomicLong last = skipWarnings.computeIfAbsent(locked,
                method -> new AtomicLong(now - SKIP_WARNING_INTERVAL.toNanos()));
        long seen = last.get();
        return now - seen >= SKIP_WARNING_INTERVAL.toNanos() && last.compareAndSet(seen, now);
    }

    private LockRequest request(LockedMethod locked, MethodInvocation invocation, Class<?> targetClass) {
        LockRequest.Builder request = LockRequest.builder(entities(locked, invocation, targetClass))
                .namespace(locked.namespace())
                .failClosed(locked.failClosed())
                .mode(locked.mode())
                .permits(locked.permits());
        if (locked.maxWait() != null) {
            request.wait(locked.maxWait());
        }
        if (locked.lease() != null) {
            request.lease(locked.lease());
        }
        return request.build();
    }

    /**
     * The caller's future completes after the lock was released, with the method's outcome. The release is a
     * DynamoDB request: it runs on CompletableFuture's async pool, not on whatever thread completed the method's
     * future (an event loop of a WebClient, say, must not block on it). A {@code ResponseEntity} it completes with
     * whose body is work still going on fails it: Spring would stream that body after the release; so does one whose
     * body throws when inspected, with that exception.
     */
    private CompletableFuture<Object> releaseOnCompletion(CompletionStage<?> returned, LockHandle lock,
            LockedMethod locked, long grantedAt, Class<?> targetClass) {
        CompletableFuture<Object> result = new CompletableFuture<>();
        returned.whenCompleteAsync((value, completion) -> {
            Throwable failure;
            try {
                // The future's work ran: a loss before the grant of a lock it asked for must not reach our caller as
                // such.
                failure = completion != null ? LockLostException.escapingWork(completion)
                        : QueueLockedMethods.unfinishedBody(value, locked, targetClass);
            }
            catch (Throwable inspecting) {
                // A body that throws when asked whether it is done (a remote handle's isDone()) fails the call, as on
                // the blocking path: escaping, it would end this callback with the lock renewed for good. Any
                // throwable: Kotlin, or a sneaky throw, gets a checked exception past the compiler.
                failure = inspecting;
            }
            try {
                finish(lock, locked, grantedAt, failure);
            }
            catch (Throwable ex) {
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

    /**
     * Every entity the expressions name: the value of each, or each element of a value that is a collection or an
     * array; of an {@code Optional} (or {@code OptionalInt}, {@code OptionalLong}, {@code OptionalDouble}), its
     * value. The request sorts them and drops duplicates.
     */
    private List<String> entities(LockedMethod locked, MethodInvocation invocation, Class<?> targetClass) {
        List<String> entities = new ArrayList<>();
        for (int i = 0; i < locked.entities().size(); i++) {
            String source = locked.entitySources().get(i);
            Object value;
            try {
                value = methods.evaluator().evaluate(locked.entities().get(i), locked.method(),
                        invocation.getArguments(), invocation.getThis(), targetClass);
            }
            catch (EvaluationException ex) {
                throw badEntity(source, locked, "could not be evaluated: " + ex.getMessage(), ex);
            }
            if (isOptional(value) && optionalValue(value) != null) {
                value = optionalValue(value); // an empty one stays, to fail below as an element would
            }
            List<Object> values = value instanceof Collection<?> collection ? new ArrayList<>(collection)
                    : value != null && value.getClass().isArray() ? Arrays.asList(ObjectUtils.toObjectArray(value))
                    : Collections.singletonList(value);
            if (values.isEmpty()) {
                throw badEntity(source, locked, "evaluated to an empty " + value.getClass().getSimpleName()
                        + "; a lock needs at least one entity", null);
            }
            String evaluated = values.size() > 1 ? "yielded " : "evaluated to ";
            for (Object given : values) {
                // An Optional's string (Optional[order-1], Optional.empty) names no entity: its value does, and an
                // empty one is an optional key's null.
                Object element = optionalValue(given);
                String entity = element == null ? null : element.toString();
                if (entity == null || entity.isBlank()) {
                    throw badEntity(source, locked, evaluated + (isOptional(given) && element == null
                            ? "an empty " + given.getClass().getSimpleName() : entity == null ? "null"
                            : "'" + Printable.escape(entity) + "'")
                            + "; a lock needs a non-blank entity", null);
                }
                if (!(element instanceof CharSequence) && QueueLockedMethods.isLaterValue(element.getClass())) {
                    throw badEntity(source, locked, evaluated + "a " + element.getClass().getTypeName() + " ('"
                            + Printable.escape(entity) + "'), " + QueueLockedMethods.LATER_VALUE + ". "
                            + QueueLockedMethods.LATER_VALUE_FIX, null);
                }
                if (!(element instanceof CharSequence) && QueueLockedMethods.hasIdentityString(element.getClass())) {
                    throw badEntity(source, locked, evaluated + "a " + element.getClass().getTypeName() + " ('" + entity
                            + "'), whose toString() is Object's: " + QueueLockedMethods.IDENTITY_STRING + ". Name a"
                            + " stable key, such as an id, or give its class a toString() that names the entity", null);
                }
                entities.add(entity);
            }
        }
        return entities;
    }

    /** Whether {@code value} is an optional key: an {@code Optional}, {@code OptionalInt}, {@code OptionalLong}... */
    private static boolean isOptional(Object value) {
        return value instanceof Optional<?> || value instanceof OptionalInt || value instanceof OptionalLong
                || value instanceof OptionalDouble;
    }

    /** An optional key's value, {@code null} if it is empty; any other value as it is. */
    private static Object optionalValue(Object value) {
        return value instanceof Optional<?> optional ? optional.orElse(null)
                : value instanceof OptionalInt optional ? (optional.isPresent() ? optional.getAsInt() : null)
                : value instanceof OptionalLong optional ? (optional.isPresent() ? optional.getAsLong() : null)
                : value instanceof OptionalDouble optional ? (optional.isPresent() ? optional.getAsDouble() : null)
                : value;
    }

    private static IllegalArgumentException badEntity(String source, LockedMethod locked, String problem,
            Exception cause) {
        return new IllegalArgumentException("@QueueLocked entity expression '" + source + "' of "
                + locked.description() + " " + problem + ". No lock was taken and the method did not run", cause);
    }

    /** Releases the lock, at once or when its minimum hold has passed, then reports a lost lease. */
    private void finish(LockHandle lock, LockedMethod locked, long grantedAt, Throwable failure) {
        boolean lostDuringTheCall = !lock.isValid();
        try {
            long remaining = locked.minHold() == null ? 0
                    : grantedAt + locked.minHold().toNanos() - System.nanoTime();
            // Held on, renewed as usual, if the minimum hold is not over (see LockHandle.releaseAfter for a close
            // meanwhile); else released now.
            lock.releaseAfter(Duration.ofNanos(remaining));
        }
        finally {
            // A release made now may find the entry gone before any heartbeat told us (broken, or purged).
            reportLoss(lock, locked, failure, lostDuringTheCall || lock.wasLost());
        }
    }

    /**
     * Reports a lease lost during the call, or found lost by its release.
     *
     * @param failure what the method threw, or {@code null}
     * @throws LockLostException if the lease was lost, the method did not throw and the policy is FAIL
     */
    private void reportLoss(LockHandle lock, LockedMethod locked, Throwable failure, boolean lost) {
        if (!lost) {
            return;
        }
        LockLostException ex = LockLostException.whileRunning(lock, locked.description());
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
