package io.dynamolock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.dynamolock.annotation.QueueLockedConfigurationException;
import io.dynamolock.core.LockTableException;
import io.dynamolock.core.LockTemplate;
import io.dynamolock.core.LockTableNotReadyException;
import io.dynamolock.core.LockTableUnavailableException;
import io.dynamolock.core.test.DynamoDbLocal;
import java.util.Objects;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.NoUniqueBeanDefinitionException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.aot.BeanInstanceSupplier;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.env.Environment;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.support.SpringFactoriesLoader;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

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

    /**
     * A table that is there but serves no request (archived, its KMS key out of reach) was told to set
     * dynamolock.create-table=true or to create it, which cannot help; its own fix can.
     */
    @Test
    void explainsATableThatServesNoRequestWithItsOwnFixNotByCreatingIt() {
        String fix = "restore it from its archival backup, or point dynamolock at another table";
        LockTableUnavailableException archived = new LockTableUnavailableException("Lock table 'x' cannot serve"
                + " locks now: it serves no request while ARCHIVED: " + fix, "ARCHIVED", fix);
        FailureAnalysis analysis = analyzer.analyze(new BeanCreationException("lockTableInitializer", "failed",
                archived));
        assertThat(analysis.getDescription()).isEqualTo(archived.getMessage());
        assertThat(analysis.getAction()).containsIgnoringCase(fix).doesNotContain("create-table")
                .doesNotContain("startup-timeout");
    }

    @Test
    void explainsBadDeclaration() {
        FailureAnalysis analysis = analyzer.analyze(new QueueLockedConfigurationException("@QueueLocked on A.b(): x"));
        assertThat(analysis.getDescription()).isEqualTo("@QueueLocked on A.b(): x");
        assertThat(analysis.getAction()).contains("SpEL");
    }

    /** dynamolock's auto-configuration beside two DynamoDbClient beans, neither of them {@code @Primary}. */
    private static ApplicationContextRunner twoClientsWithoutAPrimary() {
        DynamoDbLocal local = DynamoDbLocal.shared();
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DynamoLockAutoConfiguration.class))
                .withPropertyValues("dynamolock.table-name=" + local.newLockTable())
                .withBean("first", DynamoDbClient.class, local::client)
                .withBean("second", DynamoDbClient.class, local::client);
    }

    /**
     * Two DynamoDbClient beans, none primary: the analysis names dynamolock's bean and both ways out, ahead of Boot's
     * generic one.
     */
    @Test
    void explainsSeveralDynamoDbClientsWithoutAPrimary() {
        twoClientsWithoutAPrimary()
                .run(context -> {
                    Throwable failure = context.getStartupFailure();
                    assertThat(failure).hasRootCauseInstanceOf(NoUniqueBeanDefinitionException.class);
                    FailureAnalysis analysis = firstAnalysis(failure);
                    assertThat(analysis.getDescription()).contains("lockTableInitializer", "2 DynamoDbClient beans",
                            "first, second");
                    assertThat(analysis.getAction()).contains("Mark the DynamoDbClient the locks should use @Primary",
                            "or define a LockTemplate bean of your own");
                });
        assertThat(new SeveralDynamoDbClientsFailureAnalyzer(null).analyze(new BeanCreationException("mine", "failed",
                new NoUniqueBeanDefinitionException(DynamoDbClient.class, "first", "second")))).as("an application"
                        + " bean's failure is the application's").isNull();
    }

    /**
     * The application's own LockTemplate, named lockTemplate as its @Bean method is, that fails for want of one
     * client is the application's bean: dynamolock's backed off, and "define a LockTemplate of your own" is what the
     * application did. Boot's report is left to answer.
     */
    @Test
    void leavesAnApplicationBeanNamedLockTemplateToBoot() {
        twoClientsWithoutAPrimary()
                .withUserConfiguration(OwnLockTemplate.class)
                .run(context -> {
                    Throwable failure = context.getStartupFailure();
                    assertThat(failure).hasRootCauseInstanceOf(NoUniqueBeanDefinitionException.class);
                    assertThat(new SeveralDynamoDbClientsFailureAnalyzer(null).analyze(failure)).isNull();
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnLockTemplate {

        @Bean
        LockTemplate lockTemplate(DynamoDbClient client) {
            return LockTemplate.builder(client).tableName("own").build();
        }
    }

    /**
     * In AOT mode (a native image, -Dspring.aot.enabled=true) generated code registers dynamolock's lockTemplate as
     * below, what ApplicationContextAotGenerator writes for a @Bean method: a definition with an instance supplier
     * and no resource description. Its failure for want of one client is still dynamolock's, and explained.
     */
    @Test
    void explainsSeveralDynamoDbClientsForTheLockTemplateOfAnAotContext() {
        DynamoDbLocal local = DynamoDbLocal.shared();
        GenericApplicationContext context = new GenericApplicationContext();
        Supplier<DynamoDbClient> client = () -> local.client();
        context.registerBean("first", DynamoDbClient.class, client);
        context.registerBean("second", DynamoDbClient.class, client);
        Class<?> configuration = DynamoLockAutoConfiguration.LockTemplateConfiguration.class;
        RootBeanDefinition configurationDefinition = new RootBeanDefinition(configuration);
        configurationDefinition.setInstanceSupplier(DynamoLockAutoConfiguration.LockTemplateConfiguration::new);
        context.registerBeanDefinition(configuration.getName(), configurationDefinition);
        RootBeanDefinition lockTemplate = new RootBeanDefinition(LockTemplate.class);
        lockTemplate.setFactoryBeanName(configuration.getName());
        lockTemplate.setInstanceSupplier(BeanInstanceSupplier.<LockTemplate>forFactoryMethod(configuration,
                "lockTemplate", DynamoDbClient.class, DynamoLockProperties.class, ObjectProvider.class,
                ObjectProvider.class, ObjectProvider.class, ObjectProvider.class)
                .withGenerator((registeredBean, args) -> null));
        context.registerBeanDefinition("lockTemplate", lockTemplate);
        Throwable failure = catchThrowable(context::refresh);
        assertThat(failure).hasRootCauseInstanceOf(NoUniqueBeanDefinitionException.class);
        assertThat(((BeanCreationException) failure).getResourceDescription()).isNull();
        FailureAnalysis analysis = new SeveralDynamoDbClientsFailureAnalyzer(context.getBeanFactory())
                .analyze(failure);
        assertThat(analysis).as("analysis of %s", failure).isNotNull();
        assertThat(analysis.getDescription()).contains("dynamolock's lockTemplate needs one DynamoDbClient");
    }

    /** As Boot's report chooses: the first analyzer in order with an analysis, Boot's own among them. */
    private static FailureAnalysis firstAnalysis(Throwable failure) {
        SpringFactoriesLoader.ArgumentResolver arguments = SpringFactoriesLoader.ArgumentResolver
                .of(BeanFactory.class, new DefaultListableBeanFactory())
                .and(Environment.class, new StandardEnvironment());
        return SpringFactoriesLoader.forDefaultResourceLocation().load(FailureAnalyzer.class, arguments,
                SpringFactoriesLoader.FailureHandler.handleMessage((message, ignored) -> { })).stream()
                .map(analyzer -> analyzer.analyze(failure)).filter(Objects::nonNull).findFirst().orElseThrow();
    }

    @Test
    void leavesOtherFailuresAlone() {
        assertThat(analyzer.analyze(new IllegalStateException("other"))).isNull();
    }
}
