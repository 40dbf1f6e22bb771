package io.dynamolock.annotation.app;

import io.dynamolock.annotation.QueueLocked;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/** {@code @QueueLocked} as a meta-annotation. */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@QueueLocked(entity = "'order-' + #orderId", namespace = "meta", maxWait = "0")
public @interface OrderLock {
}
