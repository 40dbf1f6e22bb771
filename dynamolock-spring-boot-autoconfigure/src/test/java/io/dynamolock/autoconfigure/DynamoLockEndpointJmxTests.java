package io.dynamolock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.core.test.DynamoDbLocal;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.invoke.convert.ConversionServiceParameterValueMapper;
import org.springframework.boot.actuate.endpoint.jmx.ExposableJmxEndpoint;
import org.springframework.boot.actuate.endpoint.jmx.JmxOperation;
import org.springframework.boot.actuate.endpoint.jmx.annotation.JmxEndpointDiscoverer;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The endpoint over JMX: operations by method name, as JMX clients and scripts call them. */
class DynamoLockEndpointJmxTests {

    private static final DynamoDbLocal LOCAL = DynamoDbLocal.shared();

    private static final String TABLE = LOCAL.newLockTable();

    /** The JMX operation that lists this instance's locks kept its name ("locks") and its no-argument form. */
    @Test
    void theJmxLocksOperationIsStillThere() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DynamoLockAutoConfiguration.class,
                        DynamoLockEndpointAutoConfiguration.class))
                .withPropertyValues(DynamoDbLocalProperties.of(TABLE))
                .withPropertyValues("spring.jmx.enabled=true", "management.endpoints.jmx.exposure.include=dynamolock")
                .run(context -> {
                    JmxEndpointDiscoverer discoverer = new JmxEndpointDiscoverer(context,
                            new ConversionServiceParameterValueMapper(), List.of(), List.of(), List.of());
                    ExposableJmxEndpoint endpoint = discoverer.getEndpoints().stream()
                            .filter(e -> e.getEndpointId().toString().equals("dynamolock")).findFirst().orElseThrow();
                    List<String> names = endpoint.getOperations().stream().map(JmxOperation::getName).toList();
                    assertThat(names).contains("locks");
                });
    }
}
