package io.dynamolock.core.test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;

/**
 * A test hook between protocol steps: holds the next request of one operation, either
 * before it is sent ({@link Point#BEFORE_SEND}) or after its answer arrived but before
 * the caller sees it ({@link Point#AFTER_ANSWER}), until the test lets it go. Armed once.
 */
public final class PausingInterceptor implements ExecutionInterceptor {

    public enum Point { BEFORE_SEND, AFTER_ANSWER }

    private final String operation;
    private final Point point;
    private final AtomicBoolean armed = new AtomicBoolean();
    private final CountDownLatch reached = new CountDownLatch(1);
    private final CountDownLatch proceed = new CountDownLatch(1);

    public PausingInterceptor(String operation, Point point) {
        this.operation = operation;
        this.point = point;
    }

    /** Holds the next matching request. */
    public PausingInterceptor arm() {
        armed.set(true);
        return this;
    }

    /** Waits until a request is held. */
    public void awaitPaused() throws InterruptedException {
        if (!reached.await(30, TimeUnit.SECONDS)) {
            throw new AssertionError("No " + operation + " request reached the hook");
        }
    }

    public void resume() {
        proceed.countDown();
    }

    @Override
    public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
        if (point == Point.BEFORE_SEND) {
            maybePause(attributes);
        }
    }

    @Override
    public void afterUnmarshalling(Context.AfterUnmarshalling context, ExecutionAttributes attributes) {
        if (point == Point.AFTER_ANSWER) {
            maybePause(attributes);
        }
    }

    private void maybePause(ExecutionAttributes attributes) {
        if (operation.equals(attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME)) && armed.compareAndSet(true, false)) {
            reached.countDown();
            try {
                if (!proceed.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("The test never resumed the held " + operation);
                }
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
