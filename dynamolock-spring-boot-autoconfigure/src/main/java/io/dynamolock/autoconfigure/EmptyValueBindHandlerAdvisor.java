package io.dynamolock.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationPropertiesBindHandlerAdvisor;
import org.springframework.boot.context.properties.bind.AbstractBindHandler;
import org.springframework.boot.context.properties.bind.BindContext;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.util.ClassUtils;

/**
 * Lets an empty {@code dynamolock.*} value mean "unset": {@code ${LOCK_LEASE:}} with the variable unset leaves the
 * default in place, for every property, as {@code ${AWS_REGION:}} does for the region. Boot converts an empty value
 * to {@code null} for a duration, URI, number, boolean or enum and then sets nothing, so the default stays (or,
 * for an {@code int} or {@code boolean}, fails to convert); but it also leaves the name out of those it bound, and
 * {@link DynamoLockProperties}' strict binding ({@code ignoreUnknownFields = false}) would stop the start calling
 * the property unknown. This handler counts
 * such a name as bound. Names of other prefixes are left as Boot binds them. (Empty strings bind as they are: the
 * string properties treat a blank value as unset themselves.)
 */
class EmptyValueBindHandlerAdvisor implements ConfigurationPropertiesBindHandlerAdvisor {

    private static final ConfigurationPropertyName PREFIX = ConfigurationPropertyName.of("dynamolock");

    @Override
    public BindHandler apply(BindHandler bindHandler) {
        return new AbstractBindHandler(bindHandler) {

            /**
             * A primitive ({@code int}, {@code boolean}) is bound as its wrapper, so that an empty value binds
             * nothing, as for any other type, instead of failing to convert: null cannot be an {@code int}.
             */
            @Override
            public <T> Bindable<T> onStart(ConfigurationPropertyName name, Bindable<T> target, BindContext context) {
                Class<?> type = target.getType().resolve();
                if (type != null && type.isPrimitive() && PREFIX.isAncestorOf(name)) {
                    @SuppressWarnings("unchecked")
                    Bindable<T> wrapper = (Bindable<T>) Bindable.of(ClassUtils.resolvePrimitiveIfNecessary(type))
                            .withAnnotations(target.getAnnotations());
                    return super.onStart(name, wrapper, context);
                }
                return super.onStart(name, target, context);
            }

            @Override
            public void onFinish(ConfigurationPropertyName name, Bindable<?> target, BindContext context,
                    Object result) throws Exception {
                ConfigurationProperty property = context.getConfigurationProperty();
                // A value that was found, yet bound nothing: Boot's converters give null only for an empty one.
                if (result == null && property != null && property.getName().equals(name)
                        && PREFIX.isAncestorOf(name)) {
                    super.onSuccess(name, target, context, property.getValue());
                }
                super.onFinish(name, target, context, result);
            }
        };
    }
}
