/**
 * The dynamolock protocol. Only {@code io.dynamolock.core} is API: the engine in {@code io.dynamolock.core.internal}
 * is not exported, so code on the module path cannot reach it; on the class path its public types are
 * still visible, and are not covered by any compatibility promise.
 */
module io.dynamolock.core {
    requires transitive software.amazon.awssdk.services.dynamodb;
    requires transitive software.amazon.awssdk.core;
    requires transitive software.amazon.awssdk.awscore;
    requires software.amazon.awssdk.metrics;
    requires org.slf4j;
    requires java.management;

    exports io.dynamolock.core;
}
