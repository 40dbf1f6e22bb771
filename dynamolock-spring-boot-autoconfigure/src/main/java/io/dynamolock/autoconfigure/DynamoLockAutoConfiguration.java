package io.dynamolock.autoconfigure;

import io.dynamolock.annotation.LostLeasePolicy;
import io.dynamolock.annotation.QueueLocked;
import io.dynamolock.annotation.QueueLockedAdvisor;
import io.dynamolock.annotation.QueueLockedMethodValidator;
import io.dynamolock.core.LockListener;
import io.dynamolock.core.LockTemplate;
import java.util.function.Supplier;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Lazy;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClientBuilder;

/**
 * Auto-configuration of dynamolock: a {@link LockTemplate} on the application's
 * {@link DynamoDbClient} (or one built from {@code dynamolock.dynamodb.*}), the lock table
 * created or checked at startup, and {@link QueueLocked @QueueLocked} methods, each checked
 * at startup. Every bean backs off when the application defines its own.
 */
@AutoConfiguration(after = AopAutoConfiguration.class,
        afterName = "io.awspring.cloud.autoconfigure.dynamodb.DynamoDbAutoConfiguration")
@ConditionalOnClass({LockTemplate.class, DynamoDbClient.class})
@Conditional(DynamoLockEnabledCondition.class)
@Import({DynamoLockPropertiesConfiguration.class, DynamoLockAutoConfiguration.AutoProxyRegistrar.class})
public class DynamoLockAutoConfiguration {

    /**
     * The advisor is created with the bean post-processors, before properties are bound:
     * everything it needs is looked up on first use, but its order, read from the environment.
     * Its template is the application's one, or the {@code @Primary} one of several; with several
     * and none primary, {@link QueueLockedMethodValidator} stops the start if any method needs one.
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @ConditionalOnMissingBean
    static QueueLockedAdvisor queueLockedAdvisor(ObjectProvider<LockTemplate> lockTemplate,
            ObjectProvider<DynamoLockProperties> properties, Environment environment, BeanFactory beanFactory,
            ApplicationEventPublisher events) {
        int order = Binder.get(environment).bind("dynamolock.advisor-order", Integer.class)
                .orElse(DynamoLockProperties.DEFAULT_ADVISOR_ORDER);
        Supplier<LostLeasePolicy> lostLeasePolicy = () -> properties.getObject().getOnLostLease();
        return new QueueLockedAdvisor(lockTemplate::getObject, lostLeasePolicy, environment, beanFactory, order, events);
    }

    /**
     * Also a bean post-processor, for the beans created after the start (lazy ones): infrastructure, as the advisor,
     * which it asks for only once the singletons exist.
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @ConditionalOnMissingBean
    static QueueLockedMethodValidator queueLockedMethodValidator(
            ObjectProvider<QueueLockedAdvisor> queueLockedAdvisor) {
        return new QueueLockedMethodValidator(queueLockedAdvisor::getObject);
    }

    /**
     * Lazy: built when something injects it (our template and table check do, so a bad setting still stops the
     * start), and not at all for an application whose own template uses a client that is no bean, which then needs
     * no {@code dynamolock.dynamodb.*}.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingBean(DynamoDbClient.class)
    static class DynamoDbClientConfiguration {

        /** Closed by {@link OwnedDynamoDbClient}, once the template it serves is done with it too. */
        @Bean(destroyMethod = "")
        @Lazy
        DynamoDbClient dynamoDbClient(OwnedDynamoDbClient owned) {
            return owned.client;
        }

        @Bean
        @Lazy
        OwnedDynamoDbClient dynamoLockOwnedDynamoDbClient(DynamoLockProperties properties) {
            return new OwnedDynamoDbClient(build(properties));
        }

        private static DynamoDbClient build(DynamoLockProperties properties) {
            DynamoLockProperties.DynamoDb settings = properties.getDynamodb();
            DynamoDbClientBuilder builder = DynamoDbClient.builder();
            if (settings.getEndpoint() != null) {
                builder.endpointOverride(settings.getEndpoint());
            }
            if (settings.getRegion() != null) {
                builder.region(Region.of(settings.getRegion()));
            }
            if ((settings.getAccessKeyId() == null) != (settings.getSecretAccessKey() == null)) {
                throw new IncompleteCredentialsException(settings.getAccessKeyId() == null);
            }
            if (settings.getAccessKeyId() != null) {
                builder.credentialsProvider(StaticCredentialsProvider.create(
                        AwsBasicCredentials.create(settings.getAccessKeyId(), settings.getSecretAccessKey())));
            }
            builder.overrideConfiguration(c -> c.apiCallAttemptTimeout(settings.getApiCallAttemptTimeout())
                    .apiCallTimeout(settings.getApiCallTimeout()));
            try {
                return builder.build();
            }
            catch (SdkClientException ex) {
                throw new IllegalStateException("Could not build the DynamoDbClient for dynamolock: "
                        + ex.getMessage() + ". Set dynamolock.dynamodb.region (and dynamolock.dynamodb.endpoint for"
                        + " DynamoDB Local), or define a DynamoDbClient bean", ex);
            }
        }
    }

    /**
     * The {@code DynamoDbClient} this auto-configuration built, closed once both the context and our
     * {@code LockTemplate} are done with it. Destroyed after every bean that uses the client (they depend on it
     * through the client bean), it closes the client then, unless the template still needs it: a fail-closed lock
     * released after the context closed (a job still running then) must still be removed, or it stays taken for
     * good. The client then closes when the template has {@linkplain LockTemplate#terminated() terminated}.
     */
    static final class OwnedDynamoDbClient implements DisposableBean {

        private final DynamoDbClient client;
        private volatile LockTemplate template;

        OwnedDynamoDbClient(DynamoDbClient client) {
            this.client = client;
        }

        /** Builds the template; if it uses this client, the client outlives it. */
        LockTemplate build(DynamoDbClient inUse, LockTemplate.Builder builder) {
            LockTemplate built = builder.build();
            if (inUse == client) {
                template = built;
            }
            return built;
        }

        @Override
        public void destroy() {
            LockTemplate served = template;
            if (served == null) {
                client.close();
            }
            else {
                served.terminated().whenComplete((done, never) -> client.close());
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingBean(LockTemplate.class)
    static class LockTemplateConfiguration {

        /**
         * Checks (or creates) the lock table at start, before the template exists: the table a customizer may
         * choose, learned from a builder configured as the template's is (customizers run on it too), then dropped.
         */
        @Bean
        @ConditionalOnMissingBean
        LockTableInitializer lockTableInitializer(DynamoDbClient dynamoDbClient, DynamoLockProperties properties,
                ObjectProvider<LockTemplateBuilderCustomizer> customizers) {
            LockTemplate.Builder probe = configured(LockTemplate.builder(dynamoDbClient), properties);
            customizers.orderedStream().forEach(customizer -> customizer.customize(probe));
            return new LockTableInitializer(dynamoDbClient, probe.tableName(), properties.isCreateTable(),
                    properties.getStartupTimeout());
        }

        /**
         * Made after every table initializer (ours, or each of the application's, in this context or a parent): no
         * lock is taken before the table is known to be usable.
         */
        @Bean
        LockTemplate lockTemplate(DynamoDbClient dynamoDbClient, DynamoLockProperties properties,
                ObjectProvider<LockTableInitializer> tableInitializers, ObjectProvider<LockListener> listeners,
                ObjectProvider<LockTemplateBuilderCustomizer> customizers, ObjectProvider<OwnedDynamoDbClient> owned) {
            tableInitializers.stream().forEach(checked -> { });
            LockTemplate.Builder builder = configured(LockTemplate.builder(dynamoDbClient), properties);
            listeners.orderedStream().forEach(builder::listener);
            customizers.orderedStream().forEach(customizer -> customizer.customize(builder));
            OwnedDynamoDbClient ours = owned.getIfAvailable();
            return ours == null ? builder.build() : ours.build(dynamoDbClient, builder);
        }

        /** The builder with every {@code dynamolock.*} option set. */
        private static LockTemplate.Builder configured(LockTemplate.Builder builder, DynamoLockProperties properties) {
            builder.tableName(properties.getTableName())
                    .defaultNamespace(properties.getDefaultNamespace())
                    .leaseDuration(properties.getLeaseDuration())
                    .defaultWait(properties.getDefaultWait())
                    .pollInterval(properties.getPollInterval().getMin(), properties.getPollInterval().getMax())
                    .maxQueueLength(properties.getMaxQueueLength())
                    .wakeUp(properties.getWakeUp().toOptions());
            if (properties.getHeartbeatInterval() != null) {
                builder.heartbeatInterval(properties.getHeartbeatInterval()); // unset: the core's default, half the lease
            }
            if (properties.getOwnerName() != null) {
                builder.ownerName(properties.getOwnerName());
            }
            return builder;
        }
    }

    /**
     * Registers an auto-proxy creator if the application has none (Boot's
     * {@code AopAutoConfiguration} registers one unless {@code spring.aop.auto=false}), as
     * {@code @EnableTransactionManagement} does. The advisor is an infrastructure bean, so
     * every kind of creator applies it. Proxies are of the class unless
     * {@code spring.aop.proxy-target-class=false}, as Boot's transaction auto-configuration keeps them when
     * {@code spring.aop.auto=false}: a bean injected by its class must not become an interface's proxy.
     */
    static class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar, EnvironmentAware {

        private Environment environment;

        @Override
        public void setEnvironment(Environment environment) {
            this.environment = environment;
        }

        @Override
        public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
            AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
            if (environment.getProperty("spring.aop.proxy-target-class", Boolean.class, true)) {
                AopConfigUtils.forceAutoProxyCreatorToUseClassProxying(registry);
            }
        }
    }
}
