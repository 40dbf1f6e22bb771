package io.dynamolock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.LockOptionException;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.test.DynamoDbLocal;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

/** How a refused option is reported: blamed on the property as written, or on code. */
class LockOptionFailureAnalyzerTests {

    private static final DynamoDbLocal LOCAL = DynamoDbLocal.shared();

    private static final String TABLE = LOCAL.newLockTable();

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DynamoLockAutoConfiguration.class))
            .withPropertyValues(DynamoDbLocalProperties.of(TABLE));

    /**
     * A property written with a stray space (a quoted YAML value, an env var or a mounted secret with a trailing
     * blank) and no customizer at all: the property is what the core refused, so it must be blamed, not "code".
     */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {"dynamolock.table-name|'locks '", "dynamolock.table-name|' locks'"})
    void aWrittenPropertyWithSpacesIsBlamedNotCode(String property, String value) {
        assertBlamedNotCode(property, Map.of(property, value));
    }

    /** A name of blanks only (an env var or a mounted secret holding a space) is no name: unset, as an empty one. */
    @Test
    void aNameOfBlanksOnlyIsTheDefault() {
        MapPropertySource written = new MapPropertySource("written",
                Map.of("dynamolock.owner-name", "   ", "dynamolock.default-namespace", " "));
        contextRunner.withInitializer(context -> context.getEnvironment().getPropertySources().addFirst(written))
                .run(context -> {
                    LockTemplate locks = context.getBean(LockTemplate.class);
                    assertThat(locks.ownerName()).isNotBlank();
                    assertThat(locks.defaultNamespace()).isEqualTo("default");
                });
    }

    /**
     * The wake-up advertised address written with a stray space and a port no one can send to: the core strips the
     * value (WakeUpOptions.Builder.advertisedAddress) and refuses it; the property is to blame, not code.
     */
    @Test
    void anAdvertisedAddressWithASpaceIsBlamedNotCode() {
        String property = "dynamolock.wake-up.advertised-address";
        assertBlamedNotCode(property, Map.of(property, "10.0.0.9:0 ", "dynamolock.wake-up.enabled", "true",
                "dynamolock.wake-up.bind-address", "127.0.0.1"));
    }

    /** With {@code properties} written and no customizer, the start fails and the report blames {@code property}. */
    private void assertBlamedNotCode(String property, Map<String, Object> properties) {
        MapPropertySource written = new MapPropertySource("written", properties);
        contextRunner.withInitializer(context -> context.getEnvironment().getPropertySources().addFirst(written))
                .run(context -> {
                    assertThat(context).getFailure().rootCause().isInstanceOf(LockOptionException.class);
                    StandardEnvironment environment = new StandardEnvironment();
                    environment.getPropertySources().addFirst(written);
                    ConfigurationPropertySources.attach(environment);
                    FailureAnalysis analysis = new LockOptionFailureAnalyzer(environment)
                            .analyze(context.getStartupFailure());
                    assertThat(analysis.getDescription()).as(property).doesNotContain("set in code")
                            .startsWith(property + "=");
                });
    }

    /** A refused owner name is written escaped in the report's "property=value" as in the core's message. */
    @Test
    void refusedOwnerNameIsWrittenEscapedInTheReport() {
        String property = "dynamolock.owner-name";
        MapPropertySource written = new MapPropertySource("written", Map.of(property, "\n12:00:00 ERROR forged "
                + "x".repeat(300)));
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DynamoLockAutoConfiguration.class))
                .withPropertyValues(DynamoDbLocalProperties.of(TABLE))
                .withInitializer(context -> context.getEnvironment().getPropertySources().addFirst(written))
                .run(context -> {
                    assertThat(context).getFailure().rootCause().isInstanceOf(LockOptionException.class)
                            .message().doesNotContain("\n");
                    StandardEnvironment environment = new StandardEnvironment();
                    environment.getPropertySources().addFirst(written);
                    ConfigurationPropertySources.attach(environment);
                    FailureAnalysis analysis = new LockOptionFailureAnalyzer(environment)
                            .analyze(context.getStartupFailure());
                    assertThat(analysis.getDescription()).startsWith(property + "=\\u000a12:00:00 ERROR forged")
                            .doesNotContain("\n");
                });
    }
}
