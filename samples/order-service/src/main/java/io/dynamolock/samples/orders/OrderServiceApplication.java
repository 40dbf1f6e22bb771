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
        SpringApplication.run(OrderServiceApplication.class, args);
    }
}
