package io.dynamolock.core;

/**
 * A bad option or request value, found before any request is sent: names the option (as the
 * {@link LockTemplate.Builder} or {@link LockRequest} calls it), the value, the rule and the fix.
 * An {@link IllegalArgumentException}, as bad arguments are in Java; the core is the one place that
 * holds these rules, and layers above map {@link #option()} to their own names (the Spring Boot
 * starter reports {@code dynamolock.lease-duration=400d} for {@code leaseDuration}).
 */
public class LockOptionException extends IllegalArgumentException {

    private final String option;
    private final transient Object value;

    /**
     * @param option  the option's name, e.g. {@code leaseDuration}
     * @param value   the value given (may be {@code null})
     * @param message the whole message: the option, the value, the rule and the fix
     */
    public LockOptionException(String option, Object value, String message) {
        super(message);
        this.option = option;
        this.value = value;
    }

    /** The option's name, e.g. {@code leaseDuration}, {@code tableName}, {@code entity}. */
    public String option() {
        return option;
    }

    /** The value that broke the rule, as given. */
    public Object value() {
        return value;
    }
}
