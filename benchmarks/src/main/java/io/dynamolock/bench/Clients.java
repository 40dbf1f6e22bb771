package io.dynamolock.bench;

import java.net.URI;
import java.time.Duration;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/** SDK clients for DynamoDB Local, each behind a {@link MeteredNetwork}. */
final class Clients {

    private Clients() {
    }

    static DynamoDbClient create(URI endpoint, MeteredNetwork network) {
        return DynamoDbClient.builder()
                .endpointOverride(endpoint)
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")))
                // Up to 128 threads wait at once; the default pool of 50 connections would queue them.
                .httpClientBuilder(ApacheHttpClient.builder().maxConnections(256)
                        .connectionAcquisitionTimeout(Duration.ofSeconds(30)))
                .overrideConfiguration(c -> c.addExecutionInterceptor(network))
                .build();
    }
}
