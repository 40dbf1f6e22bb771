package io.dynamolock.autoconfigure;

import io.dynamolock.core.LockOptionException;
import io.dynamolock.core.internal.Printable;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import org.springframework.beans.BeansException;
import org.springframework.beans.PropertyAccessorFactory;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.convert.DurationStyle;
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
    static final Map<String, String> PROPERTIES = Map.ofEntries(
            Map.entry("tableName", "dynamolock.table-name"),
            Map.entry("defaultNamespace", "dynamolock.default-namespace"),
            Map.entry("leaseDuration", "dynamolock.lease-duration"),
            Map.entry("heartbeatInterval", "dynamolock.heartbeat-interval"),
            Map.entry("defaultWait", "dynamolock.default-wait"),
            Map.entry("ownerName", "dynamolock.owner-name"),
            Map.entry("minPollInterval", "dynamolock.poll-interval.min"),
            Map.entry("maxPollInterval", "dynamolock.poll-interval.max"),
            Map.entry("maxQueueLength", "dynamolock.max-queue-length"),
            Map.entry("wakeUp.port", "dynamolock.wake-up.port"),
            Map.entry("wakeUp.bindAddress", "dynamolock.wake-up.bind-address"),
            Map.entry("wakeUp.advertisedAddress", "dynamolock.wake-up.advertised-address"),
            Map.entry("wakeUp.secret", "dynamolock.wake-up.secret"));

    /**
     * Options the core blames for a rule that involves another one, and the words by which its message names that
     * other one: a lease no longer than the heartbeat, poll bounds out of order, a port that cannot be bound on the
     * bind address. The property written may be either.
     */
    private static final Map<String, String[]> PARTNERS = Map.of(
            "leaseDuration", new String[] {"heartbeatInterval", "than the heartbeat interval"},
            "maxPollInterval", new String[] {"minPollInterval", "than minPollInterval"},
            "wakeUp.port", new String[] {"wakeUp.bindAddress", "Cannot receive wake-up hints"});

    /** Properties whose value a failure message must never show. */
    private static final String SECRET = "dynamolock.wake-up.secret";

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
        boolean bindFailure = cause.option().equals("wakeUp.port") && cause.value() instanceof String;
        if (written != null && !property.equals(SECRET) && !bindFailure && overridden(property, cause.value())) {
            return new FailureAnalysis(cause.getMessage() + " (set in code, e.g. by a LockTemplateBuilderCustomizer,"
                    + " over " + property + "=" + Printable.escape(written) + ")", "Correct the code that sets " + cause.option()
                    + " as the message says.", cause);
        }
        if (written == null && !Objects.equals(expected(cause, property, bindFailure), cause.value())) {
            // Not written, and not what the properties make it: set in code, where the option's name is what to find.
            Object byDefault = property.equals(SECRET) ? null : defaultOf(property);
            return new FailureAnalysis(cause.getMessage() + " (set in code, e.g. by a LockTemplateBuilderCustomizer: "
                    + property + " is not set" + (byDefault == null ? "" : " and its default is " + byDefault) + ")",
                    "Correct the code that sets " + cause.option() + " as the message says.", cause);
        }
        String shown = property + "=" + (property.equals(SECRET) ? cause.value() : written != null
                ? Printable.escape(written)
                : Printable.escape(String.valueOf(bindFailure ? setting("dynamolock.wake-up.port") : cause.value()))
                        + " (the default)");
        String[] partner = PARTNERS.get(cause.option());
        if (partner != null && cause.getMessage().contains(partner[1])) {
            String other = PROPERTIES.get(partner[0]);
            String otherWritten = environment.getProperty(other);
            shown += " with " + other + (otherWritten != null ? "=" + Printable.escape(otherWritten) : " (the default)");
            return new FailureAnalysis(shown + ": " + cause.getMessage(), "Correct " + property + " or " + other
                    + " as the message says.", cause);
        }
        return new FailureAnalysis(shown + ": " + cause.getMessage(), "Correct " + property + " as the message says"
                + (written != null ? ", or remove it to use the default." : "."), cause);
    }

    /**
     * The core's value had the code set nothing: the property's default; for a heartbeat, half the lease; for a port
     * that cannot be bound ({@code bindFailure}), the bind address and port as the properties give them.
     */
    private Object expected(LockOptionException cause, String property, boolean bindFailure) {
        if (bindFailure) {
            return setting("dynamolock.wake-up.bind-address") + ":" + setting("dynamolock.wake-up.port");
        }
        if (cause.option().equals("heartbeatInterval")) {
            Object lease = setting("dynamolock.lease-duration");
            try {
                return (lease instanceof Duration duration ? duration : DurationStyle.detectAndParse(lease.toString()))
                        .dividedBy(2);
            }
            catch (IllegalArgumentException unreadable) {
                return null;
            }
        }
        return defaultOf(property);
    }

    /**
     * Whether the core's value is not what the property binds to (as Boot binds it, untrimmed): code set the option
     * over the property.
     */
    private boolean overridden(String property, Object value) {
        if (value == null) {
            return false;
        }
        try {
            return Binder.get(environment).bind(property, Bindable.of(value.getClass()))
                    // The core strips some values (the advertised address): as written, or stripped, is the property's.
                    .map(bound -> !bound.equals(value) && !(bound instanceof String text && text.strip().equals(value)))
                    .orElse(false);
        }
        catch (RuntimeException unbindable) {
            return false; // a value of its own kind: the message says what it is
        }
    }

    /** The property as written, else its default. */
    private Object setting(String property) {
        String written = environment.getProperty(property);
        return written != null ? written : defaultOf(property);
    }

    /**
     * The default of a {@code dynamolock.*} property, as {@link DynamoLockProperties} holds it, or {@code null} if it
     * has none (or it cannot be read): {@code dynamolock.poll-interval.min} is {@code pollInterval.min}.
     */
    private static Object defaultOf(String property) {
        StringBuilder path = new StringBuilder();
        String dashed = property.substring("dynamolock.".length());
        for (int i = 0; i < dashed.length(); i++) {
            char c = dashed.charAt(i);
            path.append(c == '-' ? Character.toUpperCase(dashed.charAt(++i)) : c);
        }
        try {
            return PropertyAccessorFactory.forBeanPropertyAccess(new DynamoLockProperties())
                    .getPropertyValue(path.toString());
        }
        catch (BeansException unreadable) {
            return null;
        }
    }
}
