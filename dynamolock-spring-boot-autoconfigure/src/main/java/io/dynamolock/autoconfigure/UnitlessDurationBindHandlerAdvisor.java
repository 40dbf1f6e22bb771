package io.dynamolock.autoconfigure;

import java.time.Duration;
import java.util.regex.Pattern;
import org.springframework.boot.context.properties.ConfigurationPropertiesBindHandlerAdvisor;
import org.springframework.boot.context.properties.bind.AbstractBindHandler;
import org.springframework.boot.context.properties.bind.BindContext;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.core.env.PropertyResolver;

/**
 * Refuses a {@code dynamolock.*} duration written without a unit. Boot reads a bare number as milliseconds, so
 * {@code lease-duration: 60}, meant as a minute, was a 60 ms lease that every lock lost before its first renewal, and
 * {@code default-wait: 30} a 30 ms wait; the core cannot tell such values from ones meant. The start stops instead,
 * naming the property, its value and both readings of it. Boot reports the refusal with the value's origin.
 */
class UnitlessDurationBindHandlerAdvisor implements ConfigurationPropertiesBindHandlerAdvisor {

    /** Resolves {@code ${...}} in a raw value, which the binder hands over unresolved. */
    private final PropertyResolver placeholders;

    UnitlessDurationBindHandlerAdvisor(PropertyResolver placeholders) {
        this.placeholders = placeholders;
    }

    private static final ConfigurationPropertyName PREFIX = ConfigurationPropertyName.of("dynamolock");

    /** A bare number but 0, which means the same in every unit (a {@code default-wait} of 0: no wait). */
    private static final Pattern BARE_NUMBER = Pattern.compile("\\s*[-+]?0*[1-9]\\d*\\s*");

    @Override
    public BindHandler apply(BindHandler bindHandler) {
        return new AbstractBindHandler(bindHandler) {

            @Override
            public Object onSuccess(ConfigurationPropertyName name, Bindable<?> target, BindContext context,
                    Object result) {
                ConfigurationProperty property = context.getConfigurationProperty();
                if (!(result instanceof Duration) || !PREFIX.isAncestorOf(name) || property == null
                        || !property.getName().equals(name)) {
                    return super.onSuccess(name, target, context, result);
                }
                // YAML gives a bare number as a number, a properties file or the command line as text, and the
                // binder hands it over with its ${...} unresolved.
                Object raw = property.getValue();
                Object value = raw instanceof CharSequence text ? placeholders.resolvePlaceholders(text.toString())
                        : raw;
                if (isBareNumber(value)) {
                    String number = value.toString().trim();
                    String shown = value.equals(raw) ? "'" + number + "'" : "'" + raw + "' (resolved to '" + number
                            + "')";
                    throw new IllegalArgumentException(shown + " has no unit, which Spring Boot reads as"
                            + " milliseconds; write the unit: " + number + "s for seconds, " + number
                            + "ms if milliseconds were meant (also m, h, d, or an ISO-8601 duration such as PT1M)");
                }
                return super.onSuccess(name, target, context, result);
            }
        };
    }

    private static boolean isBareNumber(Object value) {
        return value instanceof Number number && number.doubleValue() != 0
                || value instanceof CharSequence text && BARE_NUMBER.matcher(text).matches();
    }
}
