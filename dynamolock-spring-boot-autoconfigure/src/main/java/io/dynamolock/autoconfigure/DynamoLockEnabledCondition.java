package io.dynamolock.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches unless {@code dynamolock.enabled} is false, read as the property binds: missing or empty
 * ({@code ${LOCKS_ENABLED:}} with the variable unset) is the default, true. Boot's
 * {@code @ConditionalOnBooleanProperty} would take an empty value for false and switch dynamolock off, so that
 * {@code @QueueLocked} methods ran without a lock. A value that is no boolean matches, so that the binding of
 * {@link DynamoLockProperties} reports it, rather than dynamolock being off without a word.
 */
class DynamoLockEnabledCondition extends SpringBootCondition {

    private static final String PROPERTY = "dynamolock.enabled";

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        boolean enabled;
        try {
            enabled = Binder.get(context.getEnvironment()).bind(PROPERTY, Boolean.class).orElse(true);
        }
        catch (BindException notABoolean) {
            return ConditionOutcome.match(PROPERTY + " is no boolean: left to the properties' binding to report");
        }
        return enabled ? ConditionOutcome.match(PROPERTY + " is not false")
                : ConditionOutcome.noMatch(PROPERTY + " is false");
    }
}
