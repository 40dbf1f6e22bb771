package io.dynamolock.autoconfigure;

import io.dynamolock.core.internal.Printable;
import java.util.Set;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.bind.validation.BindValidationException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.origin.Origin;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.validation.FieldError;
import org.springframework.validation.ObjectError;

/**
 * Reports the values {@link DynamoLockProperties}' own checks refused: each property named as application.yml
 * writes it ({@code dynamolock.dynamodb.api-call-timeout}, where Boot's report names the bean's
 * {@code dynamodb.apiCallTimeout}), where it was written (Boot finds no origin for a property of a group), the value
 * as the check chose to show it (an endpoint without its user, password or query) and the reason with the fix. A
 * secret's value is never shown. Ordered ahead of Boot's analyzers, as {@link UnboundPropertyFailureAnalyzer} is.
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
class PropertyValidationFailureAnalyzer extends AbstractFailureAnalyzer<BindValidationException> {

    private static final ConfigurationPropertyName PREFIX = ConfigurationPropertyName.of("dynamolock");

    /** Properties whose value no report shows. */
    private static final Set<String> SECRETS = Set.of(IncompleteCredentialsException.KEY_ID,
            IncompleteCredentialsException.SECRET, "dynamolock.wake-up.secret");

    private final Environment environment;

    PropertyValidationFailureAnalyzer(Environment environment) {
        this.environment = environment;
    }

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, BindValidationException cause) {
        if (!PREFIX.equals(cause.getValidationErrors().getName())) {
            return null; // another library's properties: its report is Boot's
        }
        StringBuilder description = new StringBuilder("dynamolock cannot use the value of these properties:\n");
        for (ObjectError error : cause.getValidationErrors()) {
            if (error instanceof FieldError field) {
                String name = PREFIX + "." + DataObjectPropertyName.toDashedForm(field.getField());
                description.append("\n    Property: ").append(name);
                description.append("\n    Value: ").append(SECRETS.contains(name) ? "(a secret: not shown)"
                        : "\"" + Printable.escape(String.valueOf(field.getRejectedValue())) + "\"");
                Origin origin = originOf(name);
                if (origin != null) {
                    description.append("\n    Origin: ").append(origin);
                }
            }
            description.append("\n    Reason: ").append(error.getDefaultMessage()).append('\n');
        }
        return new FailureAnalysis(description.toString(), "Correct each property as its reason says, or remove it"
                + " to use its default. The README's configuration table lists dynamolock's properties.", cause);
    }

    /** Where {@code name} was written: the first property source that has it. */
    private Origin originOf(String name) {
        ConfigurationPropertyName property = ConfigurationPropertyName.of(name);
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            ConfigurationProperty found = source.getConfigurationProperty(property);
            if (found != null) {
                return found.getOrigin();
            }
        }
        return null;
    }
}
