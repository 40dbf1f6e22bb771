package io.dynamolock.core.test;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.Set;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;
import software.amazon.awssdk.http.SdkHttpResponse;

/**
 * A role without permission for some operations, as AWS answers it: each of them gets 400 with an
 * {@code AccessDeniedException} body, which the SDK reads as it would AWS's. Needs a client that talks HTTP to
 * DynamoDB Local ({@link DynamoDbLocal#client(ExecutionInterceptor...)}).
 */
public final class AccessDenied implements ExecutionInterceptor {

    private final Set<String> denied;

    private AccessDenied(Set<String> denied) {
        this.denied = denied;
    }

    /** Denies {@code operations}, e.g. {@code "CreateTable"}, {@code "DescribeTimeToLive"}. */
    public static AccessDenied to(String... operations) {
        return new AccessDenied(Set.of(operations));
    }

    private boolean denied(ExecutionAttributes attributes) {
        return denied.contains(attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME));
    }

    @Override
    public SdkHttpResponse modifyHttpResponse(Context.ModifyHttpResponse context, ExecutionAttributes attributes) {
        return denied(attributes) ? context.httpResponse().toBuilder().statusCode(400).statusText("Bad Request").build()
                : context.httpResponse();
    }

    @Override
    public Optional<InputStream> modifyHttpResponseContent(Context.ModifyHttpResponse context,
            ExecutionAttributes attributes) {
        if (!denied(attributes)) {
            return context.responseBody();
        }
        String action = "dynamodb:" + attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME);
        String body = "{\"__type\":\"com.amazon.coral.service#AccessDeniedException\",\"Message\":\"User:"
                + " arn:aws:sts::123456789012:assumed-role/app/i-0abc is not authorized to perform: " + action
                + " because no identity-based policy allows the " + action + " action\"}";
        return Optional.of(new ByteArrayInputStream(body.getBytes(StandardCharsets.UTF_8)));
    }
}
