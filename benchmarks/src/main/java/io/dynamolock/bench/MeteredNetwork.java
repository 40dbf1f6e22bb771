package io.dynamolock.bench;

import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.SdkResponse;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.ConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemResponse;
import software.amazon.awssdk.services.dynamodb.model.ReturnConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemResponse;

/**
 * The benchmark's network: an SDK interceptor that adds a simulated round trip to every request (half on the
 * way out, half on the way back, so a write lands half a round trip after it is sent) and meters what a user
 * would pay for: requests by operation (SDK retries included), and the read and write request units DynamoDB
 * reports. No competitor asks for consumed capacity, so the interceptor adds {@code ReturnConsumedCapacity=TOTAL}
 * to item requests; that changes nothing else. A write whose condition fails returns no capacity: it is
 * counted as one write unit (DynamoDB charges a failed conditional write like a write of the item, and every item
 * here but long dynamolock queues is under 1 KB).
 */
final class MeteredNetwork implements ExecutionInterceptor {

    private final long halfTripNanos;
    private final Map<String, LongAdder> requests = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> writesPerItem = new ConcurrentHashMap<>();
    private final DoubleAdder readUnits = new DoubleAdder();
    private final DoubleAdder writeUnits = new DoubleAdder();
    private final LongAdder failedWrites = new LongAdder();

    MeteredNetwork(Duration roundTrip) {
        this.halfTripNanos = roundTrip.toNanos() / 2;
    }

    @Override
    public SdkRequest modifyRequest(Context.ModifyRequest context, ExecutionAttributes attributes) {
        SdkRequest request = context.request();
        if (request instanceof GetItemRequest r && r.returnConsumedCapacity() == null) {
            return r.toBuilder().returnConsumedCapacity(ReturnConsumedCapacity.TOTAL).build();
        }
        if (request instanceof PutItemRequest r && r.returnConsumedCapacity() == null) {
            return r.toBuilder().returnConsumedCapacity(ReturnConsumedCapacity.TOTAL).build();
        }
        if (request instanceof UpdateItemRequest r && r.returnConsumedCapacity() == null) {
            return r.toBuilder().returnConsumedCapacity(ReturnConsumedCapacity.TOTAL).build();
        }
        if (request instanceof DeleteItemRequest r && r.returnConsumedCapacity() == null) {
            return r.toBuilder().returnConsumedCapacity(ReturnConsumedCapacity.TOTAL).build();
        }
        return request;
    }

    @Override
    public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
        SdkRequest request = context.request();
        String item = null;
        if (request instanceof PutItemRequest r) {
            item = r.tableName() + itemKey(r.item());
        }
        else if (request instanceof UpdateItemRequest r) {
            item = r.tableName() + itemKey(r.key());
        }
        else if (request instanceof DeleteItemRequest r) {
            item = r.tableName() + itemKey(r.key());
        }
        if (item != null) {
            writesPerItem.computeIfAbsent(item, k -> new LongAdder()).increment();
        }
    }

    @Override
    public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
        requests.computeIfAbsent(attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME), k -> new LongAdder())
                .increment();
        pause(halfTripNanos);
    }

    @Override
    public void afterTransmission(Context.AfterTransmission context, ExecutionAttributes attributes) {
        pause(halfTripNanos);
    }

    @Override
    public void afterExecution(Context.AfterExecution context, ExecutionAttributes attributes) {
        SdkResponse response = context.response();
        ConsumedCapacity capacity = null;
        if (response instanceof GetItemResponse r) {
            capacity = r.consumedCapacity();
        }
        else if (response instanceof PutItemResponse r) {
            capacity = r.consumedCapacity();
        }
        else if (response instanceof UpdateItemResponse r) {
            capacity = r.consumedCapacity();
        }
        else if (response instanceof DeleteItemResponse r) {
            capacity = r.consumedCapacity();
        }
        if (capacity != null && capacity.capacityUnits() != null) {
            (response instanceof GetItemResponse ? readUnits : writeUnits).add(capacity.capacityUnits());
        }
    }

    @Override
    public void onExecutionFailure(Context.FailedExecution context, ExecutionAttributes attributes) {
        if (context.exception() instanceof ConditionalCheckFailedException) {
            failedWrites.increment();
            writeUnits.add(1);
        }
    }

    /** What was metered since the last reset. */
    Meter snapshot() {
        Map<String, Long> byOperation = new TreeMap<>();
        requests.forEach((op, n) -> byOperation.put(op, n.sum()));
        return new Meter(byOperation, readUnits.sum(), writeUnits.sum(), failedWrites.sum());
    }

    /** Writes per item (table + key), since the last reset. */
    Map<String, Long> writesPerItem() {
        Map<String, Long> copy = new TreeMap<>();
        writesPerItem.forEach((item, n) -> copy.put(item, n.sum()));
        return copy;
    }

    void reset() {
        requests.clear();
        writesPerItem.clear();
        readUnits.reset();
        writeUnits.reset();
        failedWrites.reset();
    }

    /**
     * An item's key, from the key attributes of the lock tables' schemas: dynamolock (pk, sk), AWS's client (key),
     * Spring Cloud AWS (lockKey), retry (pk).
     */
    static String itemKey(Map<String, AttributeValue> item) {
        StringBuilder key = new StringBuilder();
        for (String name : new String[] {"pk", "sk", "key", "lockKey"}) {
            AttributeValue value = item.get(name);
            if (value != null) {
                key.append('|').append(value.s());
            }
        }
        return key.toString();
    }

    /** Sleeps without giving up on an interrupt: the SDK itself reacts to the thread's interrupt status. */
    static void pause(long nanos) {
        long until = System.nanoTime() + nanos;
        for (long left = nanos; left > 0; left = until - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }
}
