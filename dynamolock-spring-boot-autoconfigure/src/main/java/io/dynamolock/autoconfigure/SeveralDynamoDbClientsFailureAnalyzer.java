package io.dynamolock.autoconfigure;

import java.lang.reflect.Method;
import java.util.Set;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.NoUniqueBeanDefinitionException;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.InstanceSupplier;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Several {@code DynamoDbClient} beans, none {@code @Primary} (Spring Cloud AWS's and one of the application's for
 * another region, say), and dynamolock's table check or template cannot choose: names the ways out, which Boot's
 * generic report of a missing single bean does not. Only for dynamolock's beans: an application bean's failure is
 * left to Boot.
 */
@Order(Ordered.HIGHEST_PRECEDENCE) // ahead of Boot's NoUniqueBeanDefinitionFailureAnalyzer, which would answer too
class SeveralDynamoDbClientsFailureAnalyzer extends AbstractFailureAnalyzer<NoUniqueBeanDefinitionException> {

    /** dynamolock's beans that take the client (see DynamoLockAutoConfiguration.LockTemplateConfiguration). */
    private static final Set<String> OURS = Set.of("lockTableInitializer", "lockTemplate");

    private final BeanFactory beanFactory;

    /** @param beanFactory the failed context's, where the failing bean's definition is, or {@code null} */
    SeveralDynamoDbClientsFailureAnalyzer(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, NoUniqueBeanDefinitionException cause) {
        String bean = requiringBean(rootFailure);
        if (!DynamoDbClient.class.equals(cause.getBeanType()) || bean == null) {
            return null;
        }
        return new FailureAnalysis("dynamolock's " + bean + " needs one DynamoDbClient, and the context has "
                + cause.getNumberOfBeansFound() + " DynamoDbClient beans, none of them @Primary"
                + (cause.getBeanNamesFound() == null ? "" : ": " + String.join(", ", cause.getBeanNamesFound())),
                "Mark the DynamoDbClient the locks should use @Primary (the others can still be injected by name or"
                        + " @Qualifier), or define a LockTemplate bean of your own on the client of your choice"
                        + " (dynamolock then neither checks nor creates its table).", cause);
    }

    /**
     * Whether the failing bean was defined by {@code LockTemplateConfiguration}: an application's own {@code @Bean
     * LockTemplate lockTemplate(DynamoDbClient client)} has the name too. Its definition tells, by the class of its
     * factory method or factory bean, also in AOT mode, where generated code registers it without a resource
     * description. Without the context's definitions, the description names the class as a class path resource
     * ({@code io/dynamolock/.../DynamoLockAutoConfiguration$LockTemplateConfiguration.class}) or, registered
     * directly, by its name.
     */
    private boolean definedByUs(BeanCreationException creation) {
        String ours = DynamoLockAutoConfiguration.LockTemplateConfiguration.class.getName();
        String definedBy = factoryClass(creation.getBeanName());
        if (definedBy != null) {
            return definedBy.equals(ours);
        }
        String description = creation.getResourceDescription();
        return description != null && description.replace('/', '.').contains(ours);
    }

    /** The name of the class whose factory method defines {@code beanName}, or {@code null} if none tells. */
    private String factoryClass(String beanName) {
        if (!(beanFactory instanceof ConfigurableListableBeanFactory factory) || beanName == null
                || !factory.containsBeanDefinition(beanName)) {
            return null;
        }
        BeanDefinition definition = factory.getMergedBeanDefinition(beanName);
        if (definition instanceof RootBeanDefinition root) {
            Method method = root.getResolvedFactoryMethod();
            if (method == null && root.getInstanceSupplier() instanceof InstanceSupplier<?> generated) {
                method = generated.getFactoryMethod(); // AOT: a BeanInstanceSupplier's
            }
            if (method != null) {
                return method.getDeclaringClass().getName();
            }
        }
        String factoryBean = definition.getFactoryBeanName();
        return factoryBean != null && factory.containsBeanDefinition(factoryBean)
                ? factory.getMergedBeanDefinition(factoryBean).getBeanClassName() : null;
    }

    /** The dynamolock bean whose creation failed for want of a single client, or {@code null}. */
    private String requiringBean(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof BeanCreationException creation && OURS.contains(creation.getBeanName())
                    && definedByUs(creation)) {
                return creation.getBeanName();
            }
        }
        return null;
    }
}
