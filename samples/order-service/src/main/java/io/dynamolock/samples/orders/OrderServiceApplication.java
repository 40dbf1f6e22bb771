package io.dynamolock.samples.orders;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * Orders whose updates take turns through {@code @QueueLocked}. With no DynamoDB endpoint
 * configured it starts DynamoDB Local itself ({@link EmbeddedDynamoDb}); point it at real
 * DynamoDB or LocalStack with {@code --dynamolock.dynamodb.endpoint=...}.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class OrderServiceApplication {

    public static void main(String[] args) {
        SpringApplication.run(OrderServiceApplication.class, args);
    }
}
