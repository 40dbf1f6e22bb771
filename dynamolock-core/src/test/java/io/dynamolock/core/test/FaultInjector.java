package io.dynamolock.core.test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import io.dynamolock.core.ProtocolStep;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttribute;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.SdkHttpResponse;
import software.amazon.awssdk.retries.StandardRetryStrategy;
import software.amazon.awssdk.retries.api.BackoffStrategy;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.InternalServerErrorException;
import software.amazon.awssdk.services.dynamodb.model.ProvisionedThroughputExceededException;

/**
 * An SDK interceptor that fails chosen steps of the lock protocol, for tests against
 * DynamoDB Local as a server. Two kinds of fault:
 * <ul>
 * <li>{@code *_BEFORE}: thrown from {@code beforeTransmission}, so the request never reached
 * DynamoDB (a refusal the SDK may retry);</li>
 * <li>{@code *_AFTER}: DynamoDB applied the request, then the answer was lost
 * ({@code afterTransmission} throws) or replaced by an error ({@code modifyHttpResponse}): the
 * ambiguous write, which the SDK retries as if nothing had happened.</li>
 * </ul>
 * Each attempt (including SDK retries) is one call of {@code beforeTransmission}, so the counts
 * here are attempts, not calls. Rules are matched in the order added; a rule fails a given
 * number of attempts ({@link #fail(Step, Fault, int)}) or every attempt until removed.
 *
 * <p>{@link #onAttempt(Step, Consumer)} runs a hook on the calling thread before a step is sent,
 * e.g. to block a heartbeat on a latch and so force an interleaving without sleeping.
 */
public final class FaultInjector implements ExecutionInterceptor {

    /**
     * A request of the protocol, told apart by the {@link ProtocolStep} it carries (never by its expression
     * text); {@code OTHER} for requests that are not the lock's, e.g. a test's own.
     */
    public enum Step {
        ENQUEUE, READ, RENEW, REMOVE, PURGE, RAISE_TTL, LOWER_TTL, BREAK, OTHER;

        public static Step of(ExecutionAttributes attributes) {
            ProtocolStep step = attributes.getAttribute(ProtocolStep.ATTRIBUTE);
            return step == null ? OTHER : valueOf(step.name());
        }
    }

    /** What goes wrong with one attempt. */
    public enum Fault {
        /** 400 ProvisionedThroughputExceededException; the request never arrived. */
        THROTTLE_BEFORE(false),
        /** 400 ThrottlingException; the request never arrived. */
        THROTTLING_BEFORE(false),
        /** 500 InternalServerError; the request never arrived. */
        SERVER_ERROR_BEFORE(false),
        /** A connect timeout; the request never arrived. */
        TIMEOUT_BEFORE(false),
        /** Applied, then the connection dropped before the answer (an IOException). */
        LOST_RESPONSE(true),
        /** Applied, then answered with a 500. */
        SERVER_ERROR_AFTER(true),
        /** Applied, then answered with a 400 ProvisionedThroughputExceededException. */
        THROTTLE_AFTER(true),
        /** Applied, then the answer did not come in time (a read timeout). */
        TIMEOUT_AFTER(true);

        private final boolean applied;

        Fault(boolean applied) {
            this.applied = applied;
        }

        /** Whether DynamoDB applied the request before the fault. */
        public boolean applied() {
            return applied;
        }
    }

    private static final ExecutionAttribute<Fault> PENDING = new ExecutionAttribute<>("dynamolock.injected-fault");

    private final List<Rule> rules = new CopyOnWriteArrayList<>();
    private final Map<Step, AtomicInteger> attempts = new ConcurrentHashMap<>();
    private final Map<Step, AtomicInteger> injected = new ConcurrentHashMap<>();
    private final Map<Step, List<Consumer<SdkRequest>>> hooks = new ConcurrentHashMap<>();
    private final Map<Step, List<Consumer<SdkRequest>>> answerHooks = new ConcurrentHashMap<>();

    /**
     * A client of {@code local} with this injector in front and an explicit retry policy:
     * {@code maxAttempts} attempts per call (1 = no SDK retry), 10 ms between attempts, no
     * circuit breaker (so the attempt count never depends on earlier failures), 2 s per attempt.
     */
    public DynamoDbClient clientFor(DynamoDbLocal local, int maxAttempts) {
        return clientFor(local, maxAttempts, Duration.ofSeconds(2));
    }

    /** As {@link #clientFor(DynamoDbLocal, int)}, with {@code attemptTimeout} per attempt. */
    public DynamoDbClient clientFor(DynamoDbLocal local, int maxAttempts, Duration attemptTimeout) {
        StandardRetryStrategy retries = AwsRetryStrategy.standardRetryStrategy().toBuilder()
                .maxAttempts(maxAttempts)
                .backoffStrategy(BackoffStrategy.fixedDelay(Duration.ofMillis(10)))
                .throttlingBackoffStrategy(BackoffStrategy.fixedDelay(Duration.ofMillis(10)))
                .circuitBreakerEnabled(false)
                .build();
        return local.clientBuilder()
                .overrideConfiguration(c -> c.executionInterceptors(List.of(this))
                        .retryStrategy(retries)
                        .apiCallAttemptTimeout(attemptTimeout)
                        .apiCallTimeout(Duration.ofSeconds(10)))
                .build();
    }

    /** One way of failing a step: {@code remaining} attempts, or forever when negative. */
    public static final class Rule {
        private final Step step;
        private final Fault fault;
        private final AtomicInteger remaining;

        private Rule(Step step, Fault fault, int times) {
            this.step = step;
            this.fault = fault;
            this.remaining = new AtomicInteger(times);
        }

        private boolean take(Step candidate) {
            if (candidate != step) {
                return false;
            }
            while (true) {
                int left = remaining.get();
                if (left == 0) {
                    return false;
                }
                if (left < 0 || remaining.compareAndSet(left, left - 1)) {
                    return true;
                }
            }
        }

        /** Attempts still to fail (negative: forever). */
        public int remaining() {
            return remaining.get();
        }
    }

    /** Fails the next {@code attempts} attempts of {@code step} with {@code fault}. */
    public Rule fail(Step step, Fault fault, int attempts) {
        Rule rule = new Rule(step, fault, attempts);
        rules.add(rule);
        return rule;
    }

    /** Fails every attempt of {@code step} with {@code fault} until {@link #remove(Rule)} or {@link #clear()}. */
    public Rule failAlways(Step step, Fault fault) {
        return fail(step, fault, -1);
    }

    public void remove(Rule rule) {
        rules.remove(rule);
    }

    /** Removes every rule and hook; the counts stay. */
    public void clear() {
        rules.clear();
        hooks.clear();
        answerHooks.clear();
    }

    /** Runs {@code hook} on the sending thread before each attempt of {@code step} (before any fault). */
    public void onAttempt(Step step, Consumer<SdkRequest> hook) {
        hooks.computeIfAbsent(step, s -> new CopyOnWriteArrayList<>()).add(hook);
    }

    /**
     * Runs {@code hook} on the sending thread once DynamoDB answered an attempt of {@code step}, before the
     * caller sees the answer: the request is applied. Blocking here delays the answer, like a slow network.
     */
    public void onAnswer(Step step, Consumer<SdkRequest> hook) {
        answerHooks.computeIfAbsent(step, s -> new CopyOnWriteArrayList<>()).add(hook);
    }

    /** Attempts of {@code step} seen so far, SDK retries included. */
    public int attempts(Step step) {
        AtomicInteger count = attempts.get(step);
        return count == null ? 0 : count.get();
    }

    /** Attempts of {@code step} that were failed on purpose. */
    public int injected(Step step) {
        AtomicInteger count = injected.get(step);
        return count == null ? 0 : count.get();
    }

    /**
     * A latch released when {@code step} has been attempted {@code count} more times from now on;
     * for waiting on background requests (heartbeats, release retries) without sleeping.
     */
    public CountDownLatch awaitAttempts(Step step, int count) {
        CountDownLatch latch = new CountDownLatch(count);
        onAttempt(step, request -> latch.countDown());
        return latch;
    }

    @Override
    public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
        Step step = Step.of(attributes);
        attempts.computeIfAbsent(step, s -> new AtomicInteger()).incrementAndGet();
        attributes.putAttribute(PENDING, null);
        for (Consumer<SdkRequest> hook : hooks.getOrDefault(step, List.of())) {
            hook.accept(context.request());
        }
        for (Rule rule : rules) {
            if (rule.take(step)) {
                injected.computeIfAbsent(step, s -> new AtomicInteger()).incrementAndGet();
                if (rule.fault.applied()) {
                    attributes.putAttribute(PENDING, rule.fault);
                    return;
                }
                throw refusal(rule.fault, step);
            }
        }
    }

    @Override
    public void afterTransmission(Context.AfterTransmission context, ExecutionAttributes attributes) {
        for (Consumer<SdkRequest> hook : answerHooks.getOrDefault(Step.of(attributes), List.of())) {
            hook.accept(context.request());
        }
        Fault fault = attributes.getAttribute(PENDING);
        if (fault == Fault.LOST_RESPONSE) {
            discard(context);
            throw SdkClientException.create("Injected: connection reset after the request was applied",
                    new IOException("Connection reset (injected)"));
        }
        if (fault == Fault.TIMEOUT_AFTER) {
            discard(context);
            throw SdkClientException.create("Injected: read timed out after the request was applied",
                    new java.net.SocketTimeoutException("Read timed out (injected)"));
        }
    }

    /** Closes the answer the client will never read, which gives its connection back to the pool. */
    private static void discard(Context.AfterTransmission context) {
        context.responseBody().ifPresent(body -> {
            try {
                body.close();
            }
            catch (IOException ignored) {
                // the connection is dropped instead, as a reset one would be
            }
        });
    }

    @Override
    public SdkHttpResponse modifyHttpResponse(Context.ModifyHttpResponse context, ExecutionAttributes attributes) {
        Fault fault = attributes.getAttribute(PENDING);
        if (fault == Fault.SERVER_ERROR_AFTER) {
            return context.httpResponse().toBuilder().statusCode(500).statusText("Internal Server Error").build();
        }
        if (fault == Fault.THROTTLE_AFTER) {
            return context.httpResponse().toBuilder().statusCode(400).statusText("Bad Request").build();
        }
        return context.httpResponse();
    }

    @Override
    public Optional<InputStream> modifyHttpResponseContent(Context.ModifyHttpResponse context,
            ExecutionAttributes attributes) {
        Fault fault = attributes.getAttribute(PENDING);
        if (fault == Fault.SERVER_ERROR_AFTER) {
            return Optional.of(json("com.amazonaws.dynamodb.v20120810#InternalServerError",
                    "Injected: internal server error after the request was applied"));
        }
        if (fault == Fault.THROTTLE_AFTER) {
            return Optional.of(json("com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
                    "Injected: throttled after the request was applied"));
        }
        return context.responseBody();
    }

    private static InputStream json(String type, String message) {
        return new ByteArrayInputStream(("{\"__type\":\"" + type + "\",\"message\":\"" + message + "\"}")
                .getBytes(StandardCharsets.UTF_8));
    }

    private static RuntimeException refusal(Fault fault, Step step) {
        String message = "Injected " + fault + " on " + step;
        return switch (fault) {
            case THROTTLE_BEFORE -> ProvisionedThroughputExceededException.builder().statusCode(400).message(message)
                    .awsErrorDetails(details("ProvisionedThroughputExceededException", message)).build();
            case THROTTLING_BEFORE -> DynamoDbException.builder().statusCode(400).message(message)
                    .awsErrorDetails(details("ThrottlingException", message)).build();
            case SERVER_ERROR_BEFORE -> InternalServerErrorException.builder().statusCode(500).message(message)
                    .awsErrorDetails(details("InternalServerError", message)).build();
            case TIMEOUT_BEFORE -> SdkClientException.create(message,
                    new java.net.SocketTimeoutException("connect timed out (injected)"));
            default -> throw new IllegalArgumentException(fault + " is not a refusal");
        };
    }

    private static AwsErrorDetails details(String code, String message) {
        return AwsErrorDetails.builder().errorCode(code).errorMessage(message).serviceName("DynamoDb").build();
    }

    /** Delays the calling thread, for {@link #onAnswer} hooks that play a slow network. */
    public static void delay(Duration delay) {
        try {
            Thread.sleep(delay.toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** Blocks the calling thread on {@code latch}, for hooks; fails the request if it takes too long. */
    public static void await(CountDownLatch latch, long seconds) {
        try {
            if (!latch.await(seconds, TimeUnit.SECONDS)) {
                throw new IllegalStateException("hook latch not released within " + seconds + " s");
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted in a hook", ex);
        }
    }
}
