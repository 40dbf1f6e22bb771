package io.dynamolock.samples.orders;

import org.springframework.boot.jackson.autoconfigure.JsonMapperBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import tools.jackson.databind.cfg.CoercionAction;
import tools.jackson.databind.cfg.CoercionInputShape;
import tools.jackson.databind.type.LogicalType;

/**
 * Request bodies are taken as typed: a number in quotes for a price, or a number or {@code true} for a name, is a
 * 400 naming the field, not converted (Jackson converts such scalars by default). With application.yml's
 * {@code fail-on-unknown-properties}, {@code accept-float-as-int: false} and {@code strict-duplicate-detection} (a
 * field sent twice), what is stored is what was sent.
 */
@Configuration(proxyBeanMethods = false)
class StrictJson {

    @Bean
    JsonMapperBuilderCustomizer noScalarConversions() {
        return builder -> builder
                .withCoercionConfig(LogicalType.Integer, numbers -> numbers
                        .setCoercion(CoercionInputShape.String, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail))
                .withCoercionConfig(LogicalType.Textual, texts -> texts
                        .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail));
    }
}
