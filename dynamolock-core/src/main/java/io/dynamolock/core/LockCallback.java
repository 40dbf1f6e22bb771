package io.dynamolock.core;

/**
 * Work done while holding a lock, with the {@link LockHandle} at hand for its
 * fencing token and validity.
 *
 * @param <T> the result type
 * @param <E> the exception the work may throw
 * @see LockTemplate#execute(LockRequest, LockCallback)
 */
@FunctionalInterface
public interface LockCallback<T, E extends Throwable> {

    T doWithLock(LockHandle lock) throws E;
}
