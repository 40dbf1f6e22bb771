package io.dynamolock.bench;

import java.net.URI;
import java.time.Duration;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient;
import software.amazon.awssdk.http.nio.netty.SdkEventLoopGroup;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The SDK clients of one JVM for DynamoDB Local, both behind one {@link MeteredNetwork}: a synchronous client
 * (dynamolock, AWS's lock client, the backoff lock) and an asynchronous one (Spring Cloud AWS's lock registry,
 * which takes nothing else).
 */
record Clients(DynamoDbClient sync, DynamoDbAsyncClient async) implements AutoCloseable {

    /** Up to 128 threads wait at once; the default pools (50 connections) would queue them. */
    static final int CONNECTIONS = 256;

    /**
     * The SDK calls {@link MeteredNetwork}'s after-the-answer half round trip on the Netty event loop of the
     * connection, where it holds up every other connection of that loop (the default is 2 loops per core). With
     * this many, concurrent answers rarely share one.
     */
    static final int EVENT_LOOPS = 64;

    private static final StaticCredentialsProvider CREDENTIALS =
            StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local"));

    static Clients create(URI endpoint, MeteredNetwork network) {
        DynamoDbAsyncClient async = DynamoDbAsyncClient.builder()
                .endpointOverride(endpoint)
                .region(Region.US_EAST_1)
                .credentialsProvider(CREDENTIALS)
                .httpClientBuilder(NettyNioAsyncHttpClient.builder().maxConcurrency(CONNECTIONS)
                        .connectionAcquisitionTimeout(Duration.ofSeconds(30))
                        .eventLoopGroupBuilder(SdkEventLoopGroup.builder().numberOfThreads(EVENT_LOOPS)))
                .overrideConfiguration(c -> c.addExecutionInterceptor(network))
                .build();
        return new Clients(sync(endpoint, CONNECTIONS, network), async);
    }

    /** A synchronous client whose requests pass {@code interceptors} in order. */
    static DynamoDbClient sync(URI endpoint, int maxConnections, ExecutionInterceptor... interceptors) {
        return DynamoDbClient.builder()
                .endpointOverride(endpoint)
                .region(Region.US_EAST_1)
                .credentialsProvider(CREDENTIALS)
                .httpClientBuilder(ApacheHttpClient.builder().maxConnections(maxConnections)
                        .connectionAcquisitionTimeout(Duration.ofSeconds(30)))
                .overrideConfiguration(c -> {
                    for (ExecutionInterceptor interceptor : interceptors) {
                        c.addExecutionInterceptor(interceptor);
                    }
                })
                .build();
    }

    @Override
    public void close() {
        sync.close();
        async.close();
    }
}
