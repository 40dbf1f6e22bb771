package io.dynamolock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.dynamolock.annotation.QueueLockedConfigurationException;
import io.dynamolock.core.LockTableException;
import io.dynamolock.core.LockTableNotReadyException;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.io.support.SpringFactoriesLoader;

class DynamoLockFailureAnalyzerTests {

    private final FailureAnalyzer analyzer = new DynamoLockFailureAnalyzer();

    @Test
    void isRegistered() {
        // Other analyzers need constructor arguments; only whether ours is listed matters here.
        assertThat(SpringFactoriesLoader.forDefaultResourceLocation().load(FailureAnalyzer.class, null,
                SpringFactoriesLoader.FailureHandler.handleMessage((message, failure) -> { })))
                .hasAtLeastOneElementOfType(DynamoLockFailureAnalyzer.class);
    }

    @Test
    void explainsMissingTable() {
        FailureAnalysis analysis = analyzer.analyze(new BeanCreationException("lockTableInitializer",
                "failed", new LockTableException("Lock table 'x' does not exist")));
        assertThat(analysis.getDescription()).isEqualTo("Lock table 'x' does not exist");
        assertThat(analysis.getAction()).contains("dynamolock.create-table=true");
    }

    @Test
    void explainsATableNotReadyInTimeWithoutAskingToCreateIt() {
        FailureAnalysis analysis = analyzer.analyze(new BeanCreationException("lockTableInitializer",
                "failed", new LockTableNotReadyException("Lock table 'x' is still CREATING after PT1M")));
        assertThat(analysis.getDescription()).isEqualTo("Lock table 'x' is still CREATING after PT1M");
        assertThat(analysis.getAction()).contains("dynamolock.startup-timeout").doesNotContain("create-table");
    }

    @Test
    void explainsBadDeclaration() {
        FailureAnalysis analysis = analyzer.analyze(new QueueLockedConfigurationException("@QueueLocked on A.b(): x"));
        assertThat(analysis.getDescription()).isEqualTo("@QueueLocked on A.b(): x");
        assertThat(analysis.getAction()).contains("SpEL");
    }

    @Test
    void leavesOtherFailuresAlone() {
        assertThat(analyzer.analyze(new IllegalStateException("other"))).isNull();
    }
}
