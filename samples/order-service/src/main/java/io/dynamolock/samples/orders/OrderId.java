package io.dynamolock.samples.orders;

import static java.lang.annotation.ElementType.FIELD;
import static java.lang.annotation.ElementType.PARAMETER;
import static java.lang.annotation.RetentionPolicy.RUNTIME;

import jakarta.validation.Constraint;
import jakarta.validation.Payload;
import jakarta.validation.ReportAsSingleViolation;
import jakarta.validation.constraints.Pattern;
import java.lang.annotation.Documented;
import java.lang.annotation.Retention;
import java.lang.annotation.Target;

/**
 * An order id: it is a DynamoDB key, the entity of the order's lock and a URL path segment, so only
 * characters that are the same in all three. {@code null} is valid (a new order then gets a generated id).
 */
@Documented
@Pattern(regexp = "[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
@ReportAsSingleViolation
@Constraint(validatedBy = {})
@Target({FIELD, PARAMETER})
@Retention(RUNTIME)
public @interface OrderId {

    String message() default "must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};
}
