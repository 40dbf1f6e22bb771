package io.dynamolock.autoconfigure;

import java.beans.PropertyDescriptor;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.springframework.beans.BeanUtils;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/**
 * Reports names under {@code dynamolock.} that are no property of {@link DynamoLockProperties} (which binds with
 * {@code ignoreUnknownFields = false}, so that a misspelt name stops the start rather than leaving the default in
 * place): each name, where it was written and the property it most likely meant, and never its value. Boot's own
 * report of the same exception shows values, and the name misspelt may be a secret's
 * ({@code dynamolock.dynamodb.secret-key}), which would then reach the startup log in clear. Ordered ahead of
 * Boot's analyzers ({@code FailureAnalyzers} takes the first analysis, in {@code @Order}); unbound names of other
 * prefixes are left to Boot.
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
class UnboundPropertyFailureAnalyzer extends AbstractFailureAnalyzer<UnboundConfigurationPropertiesException> {

    private static final String PREFIX = "dynamolock";

    /** Every property of {@link DynamoLockProperties}, by its full name: what a name left unbound is matched with. */
    static final List<String> PROPERTIES = List.copyOf(namesOf(PREFIX, DynamoLockProperties.class));

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, UnboundConfigurationPropertiesException cause) {
        ConfigurationPropertyName prefix = ConfigurationPropertyName.of(PREFIX);
        List<ConfigurationProperty> unbound = cause.getUnboundProperties().stream()
                .sorted(Comparator.comparing(ConfigurationProperty::getName)).toList();
        if (unbound.stream().noneMatch(property -> prefix.isAncestorOf(property.getName()))) {
            return null; // another library's properties: its report is Boot's
        }
        if (unbound.stream().allMatch(property -> PROPERTIES.contains(property.getName().toString()))) {
            return empty(unbound, cause);
        }
        boolean one = unbound.size() == 1;
        StringBuilder description = new StringBuilder("dynamolock has no " + (one ? "property" : "properties")
                + " named as below, so " + (one ? "its value" : "their values") + " would be ignored and the default"
                + (one ? "" : "s") + " used. Values are not shown: the name misspelt may be a secret's.\n");
        for (ConfigurationProperty property : unbound) {
            String name = property.getName().toString();
            description.append("\n    Property: ").append(name);
            if (property.getOrigin() != null) {
                description.append("\n    Origin: ").append(property.getOrigin());
            }
            String meant = prefix.isAncestorOf(property.getName()) ? nearest(name) : null;
            if (PROPERTIES.contains(name)) {
                description.append("\n    Its value is empty: remove it, give it a value or write ${VAR:default}.");
            }
            else if (meant != null) {
                description.append("\n    Did you mean ").append(meant).append('?');
            }
            description.append('\n');
        }
        return new FailureAnalysis(description.toString(), (one ? "Rename it" : "Rename each") + " to the property"
                + " meant, or remove it. The"
                + " README's configuration table lists dynamolock's properties, and IDEs complete them.", cause);
    }

    /**
     * Names that are dynamolock's properties, left unbound: their values are empty ({@code ${VAR:}} with the
     * variable unset), which Boot binds as nothing for a duration, URI, number or enum. The auto-configuration
     * makes such a value the default ({@link EmptyValueBindHandlerAdvisor}); this is the report where the
     * properties are bound without it.
     */
    private static FailureAnalysis empty(List<ConfigurationProperty> unbound, Throwable cause) {
        StringBuilder description = new StringBuilder("The value of each dynamolock property below is empty, which"
                + " binds as no value, and these properties are bound without dynamolock's auto-configuration,"
                + " which would take an empty value for the default.\n");
        for (ConfigurationProperty property : unbound) {
            description.append("\n    Property: ").append(property.getName()).append(" (its value is empty)");
            if (property.getOrigin() != null) {
                description.append("\n    Origin: ").append(property.getOrigin());
            }
            description.append('\n');
        }
        return new FailureAnalysis(description.toString(), "Remove the property for its default, give it a value,"
                + " or give a placeholder a default (${VAR:default}); or let DynamoLockAutoConfiguration bind the"
                + " properties.", cause);
    }

    /**
     * The property most likely meant by {@code unbound}, or {@code null} if none is close: the one that is the name
     * with a group left out ({@code dynamolock.region}: {@code dynamolock.dynamodb.region}), else the nearest by edit
     * distance when it differs in at most a third of its letters. No suggestion beats a wrong one.
     */
    private static String nearest(String unbound) {
        String written = unbound.substring(PREFIX.length() + 1);
        List<String> grouped = PROPERTIES.stream().filter(property -> property.endsWith("." + written)).toList();
        if (grouped.size() == 1) {
            return grouped.get(0);
        }
        String nearest = null;
        int least = Integer.MAX_VALUE;
        for (String property : PROPERTIES) {
            int distance = distance(written, property.substring(PREFIX.length() + 1));
            if (distance < least) {
                nearest = property;
                least = distance;
            }
        }
        int longer = Math.max(written.length(), nearest.length() - PREFIX.length() - 1);
        return least <= Math.max(2, longer / 3) ? nearest : null;
    }

    /** Levenshtein distance: the fewest letters to insert, delete or replace to turn one into the other. */
    private static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int replace = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(replace, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }

    /**
     * The properties of a properties class as Boot binds them: a settable bean property is one; a nested class of
     * {@link DynamoLockProperties} ({@code poll-interval}, {@code wake-up}, {@code dynamodb}) is a group of them.
     */
    private static List<String> namesOf(String prefix, Class<?> type) {
        List<String> names = new ArrayList<>();
        for (PropertyDescriptor descriptor : BeanUtils.getPropertyDescriptors(type)) {
            String name = prefix + "." + DataObjectPropertyName.toDashedForm(descriptor.getName());
            Class<?> propertyType = descriptor.getPropertyType();
            if (propertyType != null && propertyType.getDeclaringClass() == DynamoLockProperties.class) {
                names.addAll(namesOf(name, propertyType));
            }
            else if (descriptor.getWriteMethod() != null) {
                names.add(name);
            }
        }
        return names;
    }
}
