package io.dynamolock.annotation;

import io.dynamolock.core.LockMode;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method holding the FIFO-fair distributed lock of one entity (or of several):
 * callers queue in arrival order, wait at most {@link #maxWait()}, and the lock is
 * released however the method ends.
 *
 * <pre>{@code
 * @QueueLocked(entity = "#orderId")
 * public void addItem(String orderId, Item item) { ... }
 *
 * @QueueLocked(entity = "#order.customer.id", namespace = "billing", maxWait = "${orders.lock-wait:5s}")
 * public Invoice bill(Order order) { ... }
 *
 * @QueueLocked(entity = {"#from.id", "#to.id"})                 // both or neither, in a deadlock-free order
 * public void move(Warehouse from, Warehouse to, Stock stock) { ... }
 *
 * @QueueLocked(entity = "#order.id", mode = LockMode.SHARED)    // readers together, writers alone
 * public Price price(Order order) { ... }
 *
 * @QueueLocked(entity = "'partner-api'", permits = 5)           // at most 5 callers at once, cluster-wide
 * public Quote quote(Request request) { ... }
 * }</pre>
 *
 * <p>Every {@code @QueueLocked} method is checked when the application starts (expression
 * syntax, parameter names, durations, return type); a bad one stops the start with a message
 * naming the class, the method and the value. The annotation also works as a meta-annotation, on
 * methods only: a composed annotation that carries it onto a class stops the start too, since
 * it would lock nothing there.
 *
 * <ul>
 * <li>A blocking or {@code CompletableFuture} method of the same thread that already holds the lock (another
 * {@code @QueueLocked} method or the {@code LockTemplate}) joins it instead of queueing behind itself; a
 * {@code Mono}, {@code Flux}, {@code Flow} or {@code suspend} method joins only what its Reactor or coroutine
 * context carries.</li>
 * <li>A method returning {@code CompletableFuture} or {@code CompletionStage} keeps the lock
 * until the future completes; other asynchronous return types are refused at startup, also as a
 * {@code ResponseEntity}'s body. A class type variable is read as the bean's class gives it (a Spring Data
 * repository's: its interface), also in a suspend function's result: one it makes a {@code Future} is refused as a
 * declared {@code Future}. Through {@code Object}
 * or a type variable the bean leaves open, a {@code CompletableFuture} not yet done is followed as well, and other
 * work still running (a publisher, another future, a {@code ResponseEntity}'s body) fails the call, its lock
 * released: declare the type so that the lock follows it.</li>
 * <li>By default the lock is taken before a {@code @Transactional} method's transaction
 * begins and released after it ends ({@code dynamolock.advisor-order}).</li>
 * <li>Like every Spring proxy-based annotation, it applies to calls through the bean, not to
 * calls from the bean to itself ({@code this.method()}).</li>
 * </ul>
 *
 * <p>A cluster-singleton scheduled job, run by one instance at a time and skipped quietly by the
 * others:
 * <pre>{@code
 * @Scheduled(fixedRate = 60_000)
 * @QueueLocked(entity = "'nightly-report'", maxWait = "0", onWaitTimeout = WaitTimeoutPolicy.SKIP, minHold = "50s")
 * public void report() { ... }
 * }</pre>
 */
@Target({ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface QueueLocked {

    /**
     * SpEL expression of the locked entity, over the method's parameters by name
     * ({@code #orderId}, {@code #order.id}), {@code #root.args}, {@code #root.method},
     * {@code #root.target} and beans ({@code @ids.of(#order)}). Its value is turned
     * into a string; a {@code null} or blank value fails the call before any lock is taken. Of an
     * {@code Optional}, its value is (not {@code Optional[order-1]}): an empty one fails the call as {@code null}
     * does.
     * <p>Several expressions, or one whose value is a collection or an array (also in an {@code Optional}), lock
     * every entity they name, all or nothing: in one canonical order (so no two calls wait for each other in a
     * cycle, unless one of them already holds another lock: nest locks in one order), under one
     * {@link #maxWait()}, duplicates once ({@code LockRequest.builder(Collection)}).
     */
    String[] entity();

    /**
     * {@link LockMode#SHARED} for a reader of a read/write lock: readers hold together, a writer
     * ({@link LockMode#EXCLUSIVE}, the default) alone, in arrival order. A {@code SHARED} method called
     * inside an exclusive hold of the same lock joins it; an {@code EXCLUSIVE} one inside a shared hold
     * fails at once ({@code LockOptionException}) rather than waiting for itself.
     */
    LockMode mode() default LockMode.EXCLUSIVE;

    /**
     * How many callers hold the lock at once (default 1): N makes a semaphore, e.g. for a rate-limited
     * partner API. Every caller of one lock must say the same; {@code SHARED} takes 1 only; at most
     * {@code dynamolock.max-queue-length}, or the start fails.
     */
    int permits() default 1;

    /**
     * The lock's namespace: locks of different namespaces on one entity are independent.
     * Plain text; {@code ${...}} placeholders are resolved. Empty for
     * {@code dynamolock.default-namespace}.
     */
    String namespace() default "";

    /**
     * How long to wait for the lock: a duration ({@code 60s}, {@code 500ms}, {@code PT1M}),
     * {@code 0} to fail at once if the entries ahead keep the call from holding (anyone, for an exclusive lock of
     * one permit), or {@code infinite} to wait as long as it takes. {@code ${...}} placeholders are resolved. Empty
     * for {@code dynamolock.default-wait}.
     * On timeout the call fails with {@code LockWaitTimeoutException}.
     * <p>Named {@code maxWait} because an annotation attribute cannot be named {@code wait}:
     * it would clash with {@link Object#wait()}.
     */
    String maxWait() default "";

    /**
     * How long the lock stays valid without a heartbeat, e.g. {@code 2m}; longer than
     * {@code dynamolock.heartbeat-interval}. {@code ${...}} placeholders are resolved. Empty
     * for {@code dynamolock.lease-duration}.
     */
    String lease() default "";

    /**
     * What a call does when the wait runs out: {@link WaitTimeoutPolicy#FAIL} (the default) throws
     * {@code LockWaitTimeoutException}; {@link WaitTimeoutPolicy#SKIP} returns without running the method,
     * for jobs that one instance at a time should run: on methods that return nothing ({@code void}, a
     * future, {@code Mono} or {@code Flux} of {@code Void}, or a Kotlin suspend function returning {@code Unit}).
     */
    WaitTimeoutPolicy onWaitTimeout() default WaitTimeoutPolicy.FAIL;

    /**
     * The least time the lock is held from its grant, e.g. {@code 30s}: a method that returns sooner keeps
     * the lock (renewed as usual) until then, and is released in the background. For scheduled jobs, so
     * that an instance whose clock or schedule runs a little behind does not run a job that another has
     * just finished (like ShedLock's {@code lockAtLeastFor}). On {@code Mono}, {@code Flux}, {@code Flow} and
     * suspend functions the result is signalled at once and the release follows on a timer, holding no thread.
     * {@code ${...}} placeholders are resolved.
     * Empty for none.
     */
    String minHold() default "";

    /**
     * Whether the lock is fail-closed (default {@code false}): if this instance dies while the method runs,
     * the lock stays taken until someone breaks it ({@code LockTemplate.breakLock}, or
     * {@code DELETE /actuator/dynamolock/{entity}?ticket=N}), instead of passing to the next caller one lease
     * later. For work that must never run twice or be resumed blindly, e.g. a payment run. See
     * {@code LockRequest.failClosed()}.
     */
    boolean failClosed() default false;
}
