package io.dynamolock.core.test;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;

/** Counts the requests a client sends, by operation name, including SDK retries. */
public final class RequestCounter implements ExecutionInterceptor {

    private final Map<String, AtomicLong> counts = new ConcurrentHashMap<>();

    @Override
    public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
        counts.computeIfAbsent(attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME), k -> new AtomicLong())
                .incrementAndGet();
    }

    public long count(String operation) {
        AtomicLong count = counts.get(operation);
        return count == null ? 0 : count.get();
    }

    public long total() {
        return counts.values().stream().mapToLong(AtomicLong::get).sum();
    }

    public Map<String, Long> snapshot() {
        Map<String, Long> copy = new java.util.TreeMap<>();
        counts.forEach((k, v) -> copy.put(k, v.get()));
        return copy;
    }

    public void reset() {
        counts.clear();
    }
}
