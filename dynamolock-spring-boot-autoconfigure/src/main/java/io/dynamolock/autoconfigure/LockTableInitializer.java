package io.dynamolock.autoconfigure;

import io.dynamolock.core.LockTableException;
import io.dynamolock.core.TableBootstrap;
import java.time.Duration;
import org.springframework.beans.factory.InitializingBean;
import software.amazon.awssdk.core.exception.ApiCallAttemptTimeoutException;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;

/**
 * Makes sure the lock table can hold locks before the {@code LockTemplate} is used: creates
 * it if missing when {@code dynamolock.create-table=true}, else checks it and fails the
 * startup with {@link LockTableException} if it is missing or has the wrong keys.
 */
public class LockTableInitializer implements InitializingBean {

    private final DynamoDbClient client;
    private final TableBootstrap table;
    private final boolean create;
    private final Duration timeout;

    /** As {@link #LockTableInitializer(DynamoDbClient, String, boolean, Duration)}, within a minute. */
    public LockTableInitializer(DynamoDbClient client, String tableName, boolean create) {
        this(client, tableName, create, TableBootstrap.DEFAULT_TIMEOUT);
    }

    /** @param timeout the longest creating or checking the table may take ({@code dynamolock.startup-timeout}) */
    public LockTableInitializer(DynamoDbClient client, String tableName, boolean create, Duration timeout) {
        this.client = client;
        this.table = TableBootstrap.of(client, tableName).timeout(timeout);
        this.create = create;
        this.timeout = timeout;
    }

    @Override
    public void afterPropertiesSet() {
        try {
            if (create) {
                table.createIfMissing();
            }
            else {
                table.verify();
            }
        }
        catch (ApiCallTimeoutException ex) {
            throw new LockTableUnreachableException("Could not reach the lock table: DynamoDB did not answer within"
                    + " dynamolock.startup-timeout (" + timeout.toMillis() + " ms); check"
                    + " dynamolock.dynamodb.endpoint and the network, or give start-up more time", ex, true);
        }
        catch (ApiCallAttemptTimeoutException ex) {
            // The SDK's retries ran out before the startup-timeout did: its message names only its attempt limit.
            throw new LockTableUnreachableException("Could not reach the lock table: DynamoDB did not answer: each"
                    + " attempt timed out after " + attemptTimeout() + " (dynamolock.dynamodb.api-call-attempt-timeout,"
                    + " unless the application built the DynamoDbClient) and the SDK's retries ran out, within"
                    + " dynamolock.startup-timeout (" + timeout.toMillis() + " ms); check dynamolock.dynamodb.endpoint"
                    + " and the network", ex, true);
        }
        catch (SdkClientException ex) {
            // The first request of the application: where missing credentials or an unreachable endpoint show.
            // The message points at the properties for logs outside Boot's failure report, which gives the action.
            throw new LockTableUnreachableException("Could not reach the lock table: " + ex.getMessage()
                    + " (see dynamolock.dynamodb.*: credentials, endpoint, region)", ex, false);
        }
        catch (DynamoDbException ex) {
            if (!refusedCredentials(ex)) {
                throw ex;
            }
            throw new LockTableUnreachableException("DynamoDB refused the credentials: " + ex.getMessage()
                    + " (see dynamolock.dynamodb.*: credentials, endpoint, region)", ex, false);
        }
    }

    /** The client's limit on one attempt, as the message shows it. */
    private String attemptTimeout() {
        try {
            return client.serviceClientConfiguration().overrideConfiguration().apiCallAttemptTimeout()
                    .map(limit -> limit.toMillis() + " ms").orElse("the client's limit");
        }
        catch (RuntimeException unknown) {
            return "the client's limit"; // a client that does not tell (a test double)
        }
    }

    /** DynamoDB's answers to keys it does not know, a bad signature or an expired session. */
    private static boolean refusedCredentials(DynamoDbException ex) {
        String code = ex.awsErrorDetails() == null ? null : ex.awsErrorDetails().errorCode();
        return code != null && switch (code) {
            case "UnrecognizedClientException", "InvalidSignatureException", "ExpiredTokenException",
                    "MissingAuthenticationTokenException", "IncompleteSignatureException" -> true;
            default -> false;
        };
    }
}
