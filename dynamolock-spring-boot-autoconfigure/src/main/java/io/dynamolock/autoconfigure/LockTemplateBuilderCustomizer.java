package io.dynamolock.autoconfigure;

import io.dynamolock.core.LockTemplate;

/**
 * Customizes the auto-configured {@link LockTemplate} after the {@code dynamolock.*}
 * properties and the {@code LockListener} beans were applied, e.g. to set a clock.
 */
@FunctionalInterface
public interface LockTemplateBuilderCustomizer {

    void customize(LockTemplate.Builder builder);
}
