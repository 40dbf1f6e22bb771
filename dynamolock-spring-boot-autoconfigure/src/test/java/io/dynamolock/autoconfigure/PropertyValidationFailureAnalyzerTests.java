package io.dynamolock.autoconfigure;

import static io.dynamolock.autoconfigure.UnboundPropertyFailureAnalyzerTests.fail;
import static io.dynamolock.autoconfigure.UnboundPropertyFailureAnalyzerTests.report;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * A {@code dynamolock.*} value the properties' own checks refuse stops the start with a report that names the
 * property as it is written in application.yml, where it was written, the problem and the fix, and never shows the
 * credentials a value may carry. Run through {@link UnboundPropertyFailureAnalyzerTests#fail} (Boot's analyzers
 * found first), so that the tests also prove this analyzer is asked before Boot's own, which shows values.
 */
@ExtendWith(OutputCaptureExtension.class)
class PropertyValidationFailureAnalyzerTests {

    /** An endpoint with a user, a password and a token in its query: refused for its scheme, shown without them. */
    @Test
    void aRefusedEndpointIsNamedWithoutTheCredentialsItCarries(CapturedOutput output) {
        fail("--dynamolock.dynamodb.endpoint=ftp://lock-user:s3cr3t-pw@db.example:8000/x?X-Amz-Security-Token=t0k3n");
        assertThat(report(output)).contains("Property: dynamolock.dynamodb.endpoint")
                .contains("Value: \"ftp://***@db.example:8000/x?***\"")
                .contains("Origin: \"dynamolock.dynamodb.endpoint\" from property source \"commandLineArgs\"")
                .contains("must be an http or https URL with a host")
                .doesNotContain("lock-user").doesNotContain("s3cr3t-pw").doesNotContain("t0k3n");
    }

    /** Users write kebab-case in application.yml; a report in the bean's camelCase names no line they wrote. */
    /** The scheme forgotten: Java reads the user as the scheme, which the report must not show either. */
    @Test
    void anEndpointWithoutItsSchemeIsNotShownWithItsUser(CapturedOutput output) {
        fail("--dynamolock.dynamodb.endpoint=lock-user:s3cr3t-pw@db.example:8000");
        assertThat(report(output)).contains("Property: dynamolock.dynamodb.endpoint").contains("Value: \"***\"")
                .doesNotContain("lock-user").doesNotContain("s3cr3t-pw");
    }

    @Test
    void namesRefusedPropertiesAsTheyAreWritten(CapturedOutput output) {
        fail("--dynamolock.startup-timeout=0s", "--dynamolock.dynamodb.api-call-attempt-timeout=-1s");
        assertThat(report(output)).contains("Property: dynamolock.startup-timeout")
                .contains("Origin: \"dynamolock.startup-timeout\" from property source \"commandLineArgs\"")
                .contains("Property: dynamolock.dynamodb.api-call-attempt-timeout")
                .contains("Origin: \"dynamolock.dynamodb.api-call-attempt-timeout\" from property source")
                .contains("must be positive, e.g. 5s")
                .doesNotContain("startupTimeout").doesNotContain("apiCallAttemptTimeout");
    }

    /** Past 292 years the start-up deadline overflowed: the start failed with "long overflow", naming nothing. */
    @Test
    void namesATimeoutTooLongToCountDown(CapturedOutput output) {
        fail("--dynamolock.startup-timeout=110000d");
        assertThat(report(output)).contains("Property: dynamolock.startup-timeout").contains("at most 365 days")
                .doesNotContain("long overflow");
    }

    /** A key id without its secret (or the other way round): both named as written, neither value shown. */
    @Test
    void anIncompleteKeyPairNamesBothPropertiesAndNoValue(CapturedOutput output) {
        fail("--dynamolock.dynamodb.access-key-id=AKIAIOSFODNN7EXAMPLE");
        assertThat(report(output)).contains("dynamolock.dynamodb.access-key-id")
                .contains("dynamolock.dynamodb.secret-access-key").contains("a static key needs both")
                .doesNotContain("AKIAIOSFODNN7EXAMPLE").doesNotContain("secretAccessKey");
    }
}
