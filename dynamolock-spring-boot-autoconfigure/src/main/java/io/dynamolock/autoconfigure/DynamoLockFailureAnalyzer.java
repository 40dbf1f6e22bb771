package io.dynamolock.autoconfigure;

import io.dynamolock.annotation.QueueLockedConfigurationException;
import io.dynamolock.core.DynamoLockException;
import io.dynamolock.core.LockTableAccessDeniedException;
import io.dynamolock.core.LockTableNotReadyException;
import io.dynamolock.core.LockTableException;
import io.dynamolock.core.LockTableUnavailableException;
import org.springframework.beans.factory.NoUniqueBeanDefinitionException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns dynamolock's startup failures (a missing, misshapen or unavailable lock table, badly declared
 * {@code @QueueLocked} methods, several templates for them and none primary) into Boot's
 * "APPLICATION FAILED TO START" report.
 */
class DynamoLockFailureAnalyzer extends AbstractFailureAnalyzer<DynamoLockException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, DynamoLockException cause) {
        if (cause instanceof LockTableAccessDeniedException denied) {
            boolean creating = denied.action().equals("dynamodb:CreateTable")
                    || denied.action().equals("dynamodb:UpdateTimeToLive");
            return new FailureAnalysis(cause.getMessage(), "Grant " + denied.action() + " on the lock table to the"
                    + " application's role" + (creating ? ", or create the table elsewhere (Terraform,"
                    + " CloudFormation: partition key 'pk' (S), sort key 'sk' (S), TTL on 'expiresAt') and set"
                    + " dynamolock.create-table=false." : ": dynamolock describes its table at startup and in its"
                    + " health indicator (see the README's least-privilege policy)."), cause);
        }
        if (cause instanceof LockTableNotReadyException) {
            return new FailureAnalysis(cause.getMessage(), "Start again once the table is ACTIVE and DynamoDB"
                    + " takes table operations again, or give start-up more time with dynamolock.startup-timeout.",
                    cause);
        }
        if (cause instanceof LockTableUnavailableException unavailable) {
            // The table is there: creating it, or more time at start-up, cannot help.
            String fix = unavailable.fix();
            return new FailureAnalysis(cause.getMessage(), Character.toUpperCase(fix.charAt(0)) + fix.substring(1)
                    + "; then start again.", cause);
        }
        if (cause instanceof LockTableException) {
            return new FailureAnalysis(cause.getMessage(), "Set dynamolock.create-table=true to create the table at"
                    + " startup, point dynamolock.table-name at an existing lock table, or create it: partition key"
                    + " 'pk' (S), sort key 'sk' (S), TTL on 'expiresAt'.", cause);
        }
        if (cause instanceof LockTableUnreachableException unreachable && unreachable.unanswered()) {
            return new FailureAnalysis(cause.getMessage(), "Check that dynamolock.dynamodb.endpoint (or, unset, the"
                    + " region's AWS endpoint) is a DynamoDB this application can reach: a proxy, firewall or security"
                    + " group that takes connections and never answers looks like this. If DynamoDB is only slow, raise"
                    + " dynamolock.dynamodb.api-call-attempt-timeout or dynamolock.startup-timeout.", cause);
        }
        if (cause instanceof IncompleteCredentialsException incomplete) {
            return new FailureAnalysis(cause.getMessage(), "Set " + incomplete.missing()
                    + " too, or remove " + incomplete.set() + " to use the AWS default credentials chain"
                    + " (environment, profile, the ECS or EKS role).", cause);
        }
        if (cause instanceof LockTableUnreachableException) {
            return new FailureAnalysis(cause.getMessage(), "Credentials come from the AWS default chain (environment,"
                    + " profile, the ECS or EKS role) unless dynamolock.dynamodb.access-key-id and secret-access-key"
                    + " are set; DynamoDB Local and LocalStack take any letters and digits, e.g. 'local' for both."
                    + " Check dynamolock.dynamodb.endpoint and dynamolock.dynamodb.region too.", cause);
        }
        if (cause instanceof QueueLockedConfigurationException
                && cause.getCause() instanceof NoUniqueBeanDefinitionException) {
            return new FailureAnalysis(cause.getMessage(), "Mark the LockTemplate bean that @QueueLocked methods"
                    + " should lock with @Primary; the others can still be injected by name or @Qualifier.", cause);
        }
        if (cause instanceof QueueLockedConfigurationException) {
            return new FailureAnalysis(cause.getMessage(), "Correct the @QueueLocked declaration named above: entity"
                    + " is a SpEL expression over the parameters (e.g. \"#orderId\"), maxWait and lease durations such"
                    + " as 60s, 500ms or PT1M (maxWait also 0 or infinite).", cause);
        }
        return null;
    }
}
