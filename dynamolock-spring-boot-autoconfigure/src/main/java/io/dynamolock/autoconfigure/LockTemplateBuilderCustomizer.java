package io.dynamolock.autoconfigure;

import io.dynamolock.core.LockTemplate;

/**
 * Customizes the auto-configured {@link LockTemplate} after the {@code dynamolock.*}
 * properties and the {@code LockListener} beans were applied, e.g. to set a clock.
 * It is called once more, first, on a builder of its own that is never built, from which
 * the start-up check learns the lock table: so it should only set options, and the table it
 * sets is the one checked (or created). Being needed by that check, a customizer (and what it
 * is given) cannot be ordered after it ({@code @DependsOn("lockTableInitializer")}); a listener
 * that must be is added as a {@code LockListener} bean instead.
 */
@FunctionalInterface
public interface LockTemplateBuilderCustomizer {

    void customize(LockTemplate.Builder builder);
}
