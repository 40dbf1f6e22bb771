package io.dynamolock.autoconfigure;

import io.dynamolock.core.LockOptionException;
import java.util.Map;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.env.Environment;

/**
 * Reports a lock option the core refused ({@link LockOptionException}) under the name of the
 * {@code dynamolock.*} property it came from, with the value as written:
 * {@code dynamolock.lease-duration=400d: leaseDuration PT9600H is too long: at most 365 days...}.
 * The rules themselves live in the core only.
 */
class LockOptionFailureAnalyzer extends AbstractFailureAnalyzer<LockOptionException> {

    /** Builder options of {@code LockTemplate} and the properties that set them. */
    static final Map<String, String> PROPERTIES = Map.of(
            "tableName", "dynamolock.table-name",
            "defaultNamespace", "dynamolock.default-namespace",
            "leaseDuration", "dynamolock.lease-duration",
            "heartbeatInterval", "dynamolock.heartbeat-interval",
            "defaultWait", "dynamolock.default-wait",
            "ownerName", "dynamolock.owner-name",
            "minPollInterval", "dynamolock.poll-interval.min",
            "maxPollInterval", "dynamolock.poll-interval.max",
            "maxQueueLength", "dynamolock.max-queue-length");

    private final Environment environment;

    LockOptionFailureAnalyzer(Environment environment) {
        this.environment = environment;
    }

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, LockOptionException cause) {
        String property = PROPERTIES.get(cause.option());
        if (property == null) {
            return null; // an option set in code (a customizer, a request): the message names it already
        }
        String written = environment.getProperty(property);
        String shown = property + "=" + (written != null ? written : cause.value() + " (the default)");
        return new FailureAnalysis(shown + ": " + cause.getMessage(), "Correct " + property + " as the message says,"
                + " or remove it to use the default.", cause);
    }
}
