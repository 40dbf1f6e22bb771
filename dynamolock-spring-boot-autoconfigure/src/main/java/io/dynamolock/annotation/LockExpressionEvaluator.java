package io.dynamolock.annotation;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.AnnotatedElementKey;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.CachedExpressionEvaluator;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.BeanReference;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;

/**
 * Parses each {@link QueueLocked#entity()} expression once per method, as {@code @Cacheable}
 * does with its keys, and evaluates it over a call's arguments.
 */
final class LockExpressionEvaluator extends CachedExpressionEvaluator {

    private final Map<ExpressionKey, Expression> expressions = new ConcurrentHashMap<>(64);

    private final BeanFactoryResolver beanResolver;

    LockExpressionEvaluator(BeanFactory beanFactory) {
        this.beanResolver = beanFactory == null ? null : new BeanFactoryResolver(beanFactory);
    }

    /** The parsed expression; throws {@code ParseException} if it does not parse. */
    Expression parse(String expression, AnnotatedElementKey methodKey) {
        return getExpression(expressions, methodKey, expression);
    }

    /** The method's parameter names, or {@code null} if the class was compiled without {@code -parameters}. */
    String[] parameterNames(Method method) {
        return getParameterNameDiscoverer().getParameterNames(method);
    }

    Object evaluate(Expression expression, Method method, Object[] args, Object target, Class<?> targetClass) {
        LockExpressionRoot root = new LockExpressionRoot(method, args, target, targetClass);
        MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(root, method, args,
                getParameterNameDiscoverer());
        if (beanResolver != null) {
            context.setBeanResolver(beanResolver);
        }
        return expression.getValue((EvaluationContext) context);
    }

    /** The names of the {@code #variables} an expression refers to, without the {@code #}. */
    static List<String> variables(Expression expression) {
        return names(expression, VariableReference.class);
    }

    /**
     * The names of the beans an expression refers to, as {@code BeanFactory.containsBean} takes them: {@code name}
     * for {@code @name} or {@code @'a.name'}, {@code &name} for a factory bean ({@code &name}, {@code &'a.name'}).
     */
    static List<String> beanReferences(Expression expression) {
        return names(expression, BeanReference.class).stream().map(LockExpressionEvaluator::beanName).toList();
    }

    /**
     * The bean name in a reference as SpEL prints it, less its first character: SpEL prints {@code @name},
     * {@code @'a.name'} (quoted when the name has a dot), {@code &name} (a factory bean: {@code name} is its product's
     * name, which the factory registers too) or {@code '&a.name'}.
     */
    private static String beanName(String printed) {
        String name = printed.length() > 1 && printed.endsWith("'") ? printed.substring(0, printed.length() - 1)
                : printed;
        return name.startsWith("'") ? name.substring(1) : name;
    }

    /** The names of the nodes of {@code type} in an expression: their source without its one-character prefix. */
    private static List<String> names(Expression expression, Class<? extends SpelNode> type) {
        List<String> names = new ArrayList<>();
        if (expression instanceof SpelExpression spel) {
            collect(spel.getAST(), type, names);
        }
        return names;
    }

    private static void collect(SpelNode node, Class<? extends SpelNode> type, List<String> names) {
        if (type.isInstance(node)) {
            names.add(node.toStringAST().substring(1));
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            collect(node.getChild(i), type, names);
        }
    }
}
