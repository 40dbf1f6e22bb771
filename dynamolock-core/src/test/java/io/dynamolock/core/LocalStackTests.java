package io.dynamolock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.testcontainers.localstack.LocalStackContainer;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.utility.DockerImageName;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/** The acquire/release cycle against LocalStack's DynamoDB; skipped where no Docker engine runs. */
@Testcontainers(disabledWithoutDocker = true)
class LocalStackTests {

    @Container
    static final LocalStackContainer localstack = new LocalStackContainer(DockerImageName.parse("localstack/localstack:4.4"))
            .withServices("dynamodb");

    @Test
    void acquiresAndReleasesOnLocalStack() {
        try (DynamoDbClient client = DynamoDbClient.builder()
                .endpointOverride(localstack.getEndpoint())
                .region(Region.of(localstack.getRegion()))
                .credentialsProvider(StaticCredentialsProvider.create(
                        AwsBasicCredentials.create(localstack.getAccessKey(), localstack.getSecretKey())))
                .build()) {
            TableBootstrap.of(client, "dynamolock").createIfMissing();
            try (LockTemplate locks = LockTemplate.builder(client).build()) {
                long first;
                try (LockHandle lock = locks.acquire("order-1", Duration.ofSeconds(10))) {
                    first = lock.fencingToken();
                    assertThat(locks.tryAcquire(LockRequest.builder("order-1").reentrant(false).build())).isEmpty();
                }
                try (LockHandle lock = locks.acquire("order-1", Duration.ofSeconds(10))) {
                    assertThat(lock.fencingToken()).isGreaterThan(first);
                }
                assertThat(locks.queue("order-1", null).entries()).isEmpty();
            }
        }
    }
}
