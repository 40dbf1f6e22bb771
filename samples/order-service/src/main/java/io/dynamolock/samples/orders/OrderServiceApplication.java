package io.dynamolock.samples.orders;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * Orders whose updates take turns through {@code @QueueLocked}. With neither a DynamoDB endpoint
 * nor a region configured it starts DynamoDB Local itself ({@link EmbeddedDynamoDb}); point it at
 * real DynamoDB with {@code --dynamolock.dynamodb.region=...}, or at LocalStack with
 * {@code --dynamolock.dynamodb.endpoint=...}.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class OrderServiceApplication {

    public static void main(String[] args) {
        try {
            SpringApplication.run(OrderServiceApplication.class, args);
        }
        catch (SpringApplication.AbandonedRunException abandoned) {
            throw abandoned; // AOT processing (spring-boot:process-aot, native builds) stops the run on purpose
        }
        catch (RuntimeException | Error failed) {
            // Boot has reported it. DynamoDB Local's stream job thread is no daemon and outlives its server's stop():
            // without an exit the JVM, and mvn spring-boot:run with it, would hang after a failed start.
            System.exit(1);
        }
    }
}
