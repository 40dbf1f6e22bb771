package io.dynamolock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.URL;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.DefaultResourceLoader;
import org.springframework.core.io.support.SpringFactoriesLoader;

/**
 * A name under {@code dynamolock.} that is no property stops the start (the properties bind with
 * {@code ignoreUnknownFields = false}); the report names it, suggests the property meant, and never shows the
 * value: a misspelt secret would otherwise reach the startup log in clear. Run through {@link SpringApplication}
 * and its real report, with Boot's analyzers found first, so that the tests also prove this analyzer is asked
 * before Boot's own, which shows values.
 */
@ExtendWith(OutputCaptureExtension.class)
class UnboundPropertyFailureAnalyzerTests {

    private static final String AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

    private static final String HINT_SECRET = "hint-secret-0123456789abcdef";

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(DynamoLockAutoConfiguration.class)
    static class App {
    }

    @Test
    void aMisspeltSecretIsNamedWithTheNearestPropertyAndItsValueIsNotShown(CapturedOutput output) {
        fail("--dynamolock.dynamodb.access-key=AKIAIOSFODNN7EXAMPLE", "--dynamolock.dynamodb.secret-key=" + AWS_SECRET,
                "--dynamolock.wake-up.shared-secret=" + HINT_SECRET);
        assertThat(output).contains("APPLICATION FAILED TO START")
                .contains("dynamolock.dynamodb.secret-key")
                .contains("Did you mean dynamolock.dynamodb.secret-access-key?")
                .contains("dynamolock.wake-up.shared-secret").contains("Did you mean dynamolock.wake-up.secret?")
                .contains("dynamolock.dynamodb.access-key").contains("Did you mean dynamolock.dynamodb.access-key-id?")
                .contains("Origin: \"dynamolock.dynamodb.secret-key\" from property source \"commandLineArgs\"")
                .doesNotContain(AWS_SECRET).doesNotContain(HINT_SECRET).doesNotContain("AKIAIOSFODNN7EXAMPLE");
    }

    /**
     * One key of the pair misspelt: the misspelling is what the report names, not the pair that looks incomplete
     * (a check that used to run while binding, before the unbound names, so it was reported instead), and neither
     * key's value is shown.
     */
    @ParameterizedTest
    @CsvSource({"access-key-id, secret-key, secret-access-key", "access-key, secret-access-key, access-key-id"})
    void aMisspeltKeyOfThePairIsNamedRatherThanThePairBeingIncomplete(String keyId, String secret, String meant,
            CapturedOutput output) {
        fail("--dynamolock.dynamodb." + keyId + "=AKIAIOSFODNN7EXAMPLE",
                "--dynamolock.dynamodb." + secret + "=" + AWS_SECRET);
        assertThat(report(output)).contains("Did you mean dynamolock.dynamodb." + meant + "?")
                .doesNotContain("set together").doesNotContain(AWS_SECRET).doesNotContain("AKIAIOSFODNN7EXAMPLE");
    }

    @Test
    void everyUnboundNameIsListedEachWithItsSuggestion(CapturedOutput output) {
        fail("--dynamolock.lease-duraton=1s", "--dynamolock.wake-up.secert=" + HINT_SECRET, "--dynamolock.region=x");
        String report = report(output);
        assertThat(report).contains("dynamolock.lease-duraton").contains("Did you mean dynamolock.lease-duration?")
                .contains("dynamolock.wake-up.secert").contains("Did you mean dynamolock.wake-up.secret?")
                .contains("dynamolock.region").contains("Did you mean dynamolock.dynamodb.region?")
                .doesNotContain(HINT_SECRET).doesNotContain("Value:");
    }

    @Test
    void aNameLikeNoPropertyGetsNoSuggestion(CapturedOutput output) {
        fail("--dynamolock.frobnicate=secret-value");
        assertThat(report(output)).contains("dynamolock.frobnicate").doesNotContain("Did you mean")
                .doesNotContain("secret-value");
    }

    @ConfigurationProperties(prefix = "other", ignoreUnknownFields = false)
    static class OtherProperties {
    }

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(OtherProperties.class)
    static class OtherApp {
    }

    /** Another library's properties are its own business: Boot's report stays as it is. */
    @Test
    void leavesUnboundPropertiesOfOtherPrefixesToBoot(CapturedOutput output) {
        fail(OtherApp.class, "--other.x=y");
        assertThat(report(output)).contains("Property: other.x").contains("Value: \"y\"")
                .contains("Update your application's configuration").doesNotContain("Did you mean");
    }

    /** The properties bound without the auto-configuration, which makes an empty value the default. */
    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(DynamoLockProperties.class)
    static class PropertiesOnly {
    }

    /**
     * Without the auto-configuration an empty value of a duration (${VAR:} with the variable unset) binds nothing
     * and Boot counts its name as unknown: the report says the value is empty and how to fix it, not "no property
     * named dynamolock.heartbeat-interval, did you mean dynamolock.heartbeat-interval?".
     */
    @Test
    void anEmptyValueLeftUnboundIsReportedAsEmptyWithTheFix(CapturedOutput output) {
        fail(PropertiesOnly.class, "--dynamolock.heartbeat-interval=${DYNAMOLOCK_TEST_UNSET_VAR:}");
        assertThat(output).contains("APPLICATION FAILED TO START").contains("dynamolock.heartbeat-interval")
                .contains("is empty").contains("${VAR:default}").doesNotContain("Did you mean")
                .doesNotContain("has no property");
    }

    static void fail(String... args) {
        fail(App.class, args);
    }

    /**
     * Starts the application, which fails. Its class loader lists the {@code spring.factories} files in reverse, so
     * Boot's analyzers are found before this module's: this analyzer must come first by its order, not by the class
     * path's (which, in a packaged application, nothing fixes).
     */
    static void fail(Class<?> application, String... args) {
        SpringApplication app = new SpringApplication(application);
        app.setWebApplicationType(WebApplicationType.NONE);
        app.setResourceLoader(new DefaultResourceLoader(new FactoriesReversed()));
        assertThatThrownBy(() -> app.run(args)).isNotNull();
    }

    /** The test's class loader, with the {@code spring.factories} files in reverse order. */
    private static final class FactoriesReversed extends ClassLoader {

        FactoriesReversed() {
            super(UnboundPropertyFailureAnalyzerTests.class.getClassLoader());
        }

        @Override
        public Enumeration<URL> getResources(String name) throws IOException {
            List<URL> urls = Collections.list(super.getResources(name));
            if (name.equals(SpringFactoriesLoader.FACTORIES_RESOURCE_LOCATION)) {
                Collections.reverse(urls);
            }
            return Collections.enumeration(urls);
        }
    }

    /** Boot's report, which follows the heading. */
    static String report(CapturedOutput output) {
        String all = output.getAll();
        assertThat(all).contains("APPLICATION FAILED TO START");
        return all.substring(all.indexOf("APPLICATION FAILED TO START"));
    }
}
