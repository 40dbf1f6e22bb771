package io.dynamolock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/** The endpoint's own 400 answers name what was asked as every dynamolock message does. */
class DynamoLockEndpointMessageTests {

    /** A namespace without an entity: named escaped, and the advised request names the same namespace. */
    @Test
    void aNamespaceWithoutAnEntityIsNamedEscapedAndItsAdvisedQueryEncoded() {
        String namespace = "tenant\n7&x";
        Object answer = new DynamoLockEndpoint(null).locks(null, namespace);
        String message = ((DynamoLockEndpoint.ErrorDescriptor) ((WebEndpointResponse<?>) answer).getBody()).message();
        assertThat(message).contains("'tenant\\u000a7&x'").doesNotContain("\n")
                .endsWith("&namespace=" + URLEncoder.encode(namespace, StandardCharsets.UTF_8));
    }
}
