package io.dynamolock.annotation;

import io.dynamolock.core.LockOptionException;
import io.dynamolock.core.LockRequest;
import io.dynamolock.core.LockTemplate;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Proxy;
import java.lang.reflect.Type;
import java.lang.reflect.WildcardType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Flow;
import java.util.concurrent.Future;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.context.expression.AnnotatedElementKey;
import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodParameter;
import org.springframework.core.MethodClassKey;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.core.env.PropertyResolver;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.http.HttpEntity;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringUtils;

/**
 * Finds, parses and checks {@link QueueLocked} methods, once per method and target class.
 * Placeholders are resolved first, then durations are parsed with Boot's {@link DurationStyle}.
 */
final class QueueLockedMethods {

    /** The longest minimum hold, as the longest lease: a longer one is a mistake (and overflowed at the release). */
    private static final Duration MAX_MIN_HOLD = Duration.ofDays(365);

    /** {@code #root}, {@code #this} and the positional {@code #p0} / {@code #a0} are always defined. */
    private static final Pattern BUILT_IN_VARIABLE = Pattern.compile("root|this|[pa]\\d+");

    private static final Pattern POSITIONAL_VARIABLE = Pattern.compile("[pa](\\d+)");

    /** Why Object's {@code toString()} names no entity; shared with the interceptor's message at a call. */
    static final String IDENTITY_STRING = "an identity hash, different for each instance and each JVM, so no two"
            + " calls would share a lock";

    /** Asked at every call for each entity value's class: looked up once per class. */
    private static final ClassValue<Boolean> IDENTITY_STRING_CLASSES = new ClassValue<>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
            return !type.isInterface() && (type.isArray()
                    || ReflectionUtils.findMethod(type, "toString").getDeclaringClass() == Object.class);
        }
    };

    /**
     * Why a future's or a publisher's {@code toString()} names no entity; shared with the interceptor's message at a
     * call.
     */
    static final String LATER_VALUE = "a value that arrives later, not a key: its string names the instance (a"
            + " future's identity hash and state) or its operators (MonoJust), not the value, so two calls for one"
            + " entity would not share a lock, and calls for unrelated ones might";

    /** What to lock on instead of a value that arrives later; shared with the interceptor's message at a call. */
    static final String LATER_VALUE_FIX = "Name the key inside it, e.g. resolve the order first and lock on its id,"
            + " or take the lock inside the pipeline with ReactiveLockOperations or LockTemplate";

    /** Asked at every call for each entity value's class: looked up once per class. */
    private static final ClassValue<Boolean> LATER_VALUE_CLASSES = new ClassValue<>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
            return isLaterWork(type);
        }
    };

    /** Asked at every call that returns a {@code Callable} through {@code Object}: looked up once per class. */
    private static final ClassValue<Boolean> CONTROLLERS = new ClassValue<>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
            return MergedAnnotations.from(type, SearchStrategy.TYPE_HIERARCHY).isPresent(CONTROLLER);
        }
    };

    static final String HTTP_ENTITY = "org.springframework.http.HttpEntity";

    /** Asked at every call for the class of what it returned: looked up once per class. */
    private static final ClassValue<Boolean> HTTP_ENTITIES = new ClassValue<>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
            return isA(type, HTTP_ENTITY);
        }
    };

    static final String PUBLISHER = "org.reactivestreams.Publisher";

    static final String CONTROLLER = "org.springframework.stereotype.Controller";

    /**
     * Asynchronous types named, not referenced, so that neither Reactive Streams nor Spring MVC is needed: a
     * Publisher, and what a Spring MVC controller may return for work done later (a WebAsyncTask runs on MVC's
     * executor, a DeferredResult or an emitter completes whenever its producer says so), also as the body of a
     * {@code ResponseEntity}.
     */
    static final List<String> LATER_WORK = List.of(PUBLISHER,
            "org.springframework.web.context.request.async.DeferredResult",
            "org.springframework.web.context.request.async.WebAsyncTask",
            "org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter",
            "org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody");

    static final String MONO = "reactor.core.publisher.Mono";

    static final String FLUX = "reactor.core.publisher.Flux";

    static final String KOTLIN_FLOW = "kotlinx.coroutines.flow.Flow";

    static final String KOTLIN_DEFERRED = "kotlinx.coroutines.Deferred";

    /** A launched coroutine; a {@code Deferred} is one too, with a result. */
    static final String KOTLIN_JOB = "kotlinx.coroutines.Job";

    /** A locked Kotlin {@code Flow} carries the lock's scope in its coroutine's {@code ReactorContext}. */
    static final String COROUTINES_REACTOR = "kotlinx.coroutines.reactor.MonoKt";

    private static final String SUPPORTED = "Supported are plain values, CompletableFuture and CompletionStage (the"
            + " lock is held until it completes), with reactor-core Mono and Flux, and with kotlinx-coroutines-reactor"
            + " Kotlin suspend functions and Kotlin Flow (held while the publisher, coroutine or flow runs, released"
            + " when it completes, errors or is cancelled)";

    /** What to do instead of returning a Kotlin {@code Deferred}, or a Flow without kotlinx-coroutines-reactor. */
    private static final String KOTLIN_FIX = "In Kotlin, make it a suspend function, with kotlinx-coroutines-reactor"
            + " on the class path, or take the lock inside the coroutine with withLock (io.dynamolock:dynamolock-kotlin)";

    /** What to do instead of returning a Kotlin {@code Job}, which has no result to hand on. */
    private static final String KOTLIN_JOB_FIX = "In Kotlin, launch the coroutine inside the method and join it, or"
            + " make the method a suspend function (with kotlinx-coroutines-reactor on the class path) that does the"
            + " job's work, or take the lock inside the coroutine with withLock (io.dynamolock:dynamolock-kotlin)";

    private static final LockedMethod NOT_LOCKED = new LockedMethod(null, null, null, null, null, 1, null, null,
            null, LockedMethod.Returns.VALUE, WaitTimeoutPolicy.FAIL, null, false);

    private final Map<MethodClassKey, LockedMethod> cache = new ConcurrentHashMap<>(64);
    private final LockExpressionEvaluator evaluator;
    private final PropertyResolver placeholders;
    private final Supplier<LockTemplate> lockTemplate;
    private final BeanFactory beanFactory;

    QueueLockedMethods(PropertyResolver placeholders, BeanFactory beanFactory, Supplier<LockTemplate> lockTemplate) {
        this.placeholders = placeholders;
        this.lockTemplate = lockTemplate;
        this.beanFactory = beanFactory;
        this.evaluator = new LockExpressionEvaluator(beanFactory);
    }

    LockExpressionEvaluator evaluator() {
        return evaluator;
    }

    /**
     * The parsed method, or {@code null} if it carries no {@link QueueLocked}.
     *
     * @throws QueueLockedConfigurationException if it is declared wrongly
     */
    LockedMethod get(Method method, Class<?> targetClass) {
        MethodClassKey key = new MethodClassKey(method, targetClass);
        LockedMethod locked = cache.get(key);
        if (locked == null) {
            Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
            if (Proxy.isProxyClass(specific.getDeclaringClass())) {
                // A JDK proxy's own methods have no parameter names: the interface's method carries them.
                specific = ClassUtils.getInterfaceMethodIfPossible(specific, null);
            }
            locked = parse(specific, targetClass);
            cache.put(key, locked);
        }
        return locked == NOT_LOCKED ? null : locked;
    }

    private LockedMethod parse(Method method, Class<?> targetClass) {
        List<MergedAnnotation<QueueLocked>> declared = QueueLockedDeclarations.of(method, targetClass);
        if (declared.isEmpty()) {
            return NOT_LOCKED;
        }
        String description = describe(method, targetClass);
        if (declared.size() > 1) {
            // Composed annotations of other namespaces (@OrderLocked @BillLocked), or two interfaces locking one
            // method: one request cannot take both, and the other lock's callers would run beside this method.
            throw invalid(description, "carries @QueueLocked more than once (through " + String.join(" and ",
                    declared.stream().map(QueueLockedDeclarations::through).toList()) + "), but only one of them"
                    + " would lock. Give one annotation every entity (entity = {\"#a\", \"#b\"}) if they share a"
                    + " namespace, or take the other namespace's lock inside the method with LockTemplate.execute");
        }
        QueueLocked annotation = declared.get(0).synthesize();
        ResolvableType returned = returnType(method, targetClass);
        LockedMethod.Returns returns = returns(method, returned, targetClass, description);
        if (annotation.entity().length == 0) {
            throw invalid(description, "entity is an empty array; give one SpEL expression such as \"#orderId\","
                    + " several such as {\"#from.id\", \"#to.id\"}, or one that yields a collection");
        }
        List<Expression> entities = Arrays.stream(annotation.entity())
                .map(source -> parseEntity(source, method, targetClass, description)).toList();
        try {
            // The core holds the rules of modes and permits; its message names the value and the fix.
            LockRequest.builder("check").mode(annotation.mode()).permits(annotation.permits()).build();
        }
        catch (LockOptionException ex) {
            throw invalid(description, "mode = " + annotation.mode() + ", permits = " + annotation.permits() + ": "
                    + ex.getMessage(), ex);
        }
        String namespace = resolve(annotation.namespace(), "namespace", description);
        Duration maxWait = duration(annotation.maxWait(), "maxWait", description);
        Duration lease = duration(annotation.lease(), "lease", description);
        Duration minHold = duration(annotation.minHold(), "minHold", description);
        if (minHold != null && minHold.compareTo(MAX_MIN_HOLD) > 0) {
            throw invalid(description, "minHold '" + annotation.minHold() + "' is too long: at most 365 days");
        }
        if (minHold != null && (minHold.isNegative() || minHold.isZero())) {
            throw invalid(description, "minHold '" + annotation.minHold() + "' must be a positive duration, e.g. 30s;"
                    + " leave it empty for none");
        }
        if (annotation.onWaitTimeout() == WaitTimeoutPolicy.SKIP && !returnsNothing(method, returned, returns)) {
            throw invalid(description, "onWaitTimeout = SKIP needs a method returning void, Void or a future of Void"
                    + " (or a suspend function returning Unit): a skipped call has no value to return, and this method"
                    + " returns " + resultName(method) + ". Use FAIL and handle LockWaitTimeoutException, or return nothing");
        }
        if (maxWait != null && maxWait.isNegative()) {
            throw invalid(description, "maxWait '" + annotation.maxWait() + "' is negative; use 0 for no wait,"
                    + " a positive duration, or infinite");
        }
        // The core's rules of leases, namespaces and permits, checked now rather than failing every call. Without a
        // template yet, as for the template itself: the first call looks it up again, and checks them then.
        LockTemplate template;
        try {
            template = lease != null || !namespace.isEmpty() || annotation.permits() > 1 ? lockTemplate.get() : null;
        }
        catch (BeansException noTemplateYet) {
            template = null;
        }
        if (lease != null && template != null) {
            Duration heartbeat = template.heartbeatInterval();
            if (lease.compareTo(heartbeat) <= 0) {
                throw invalid(description, "lease '" + annotation.lease() + "' (" + lease + ") must be longer than"
                        + " the heartbeat interval " + heartbeat + " (dynamolock.heartbeat-interval), or the lock"
                        + " would expire before it is renewed; twice the heartbeat interval or more is usual");
            }
            try {
                template.checkOptions(lease, null);
            }
            catch (LockOptionException ex) {
                throw invalid(description, "lease '" + annotation.lease() + "' is refused: " + ex.getMessage(), ex);
            }
        }
        if (template != null && annotation.permits() > template.maxQueueLength()) {
            throw invalid(description, "permits = " + annotation.permits() + " is more than the "
                    + template.maxQueueLength() + " entries a queue may hold (dynamolock.max-queue-length): raise it"
                    + " to at least " + annotation.permits() + ", or ask for fewer permits");
        }
        if (!namespace.isEmpty() && template != null) {
            try {
                template.checkOptions(null, namespace);
            }
            catch (LockOptionException ex) {
                throw invalid(description, ex.getMessage(), ex); // it names the namespace
            }
        }
        return new LockedMethod(method, description, List.of(annotation.entity()), entities, annotation.mode(),
                annotation.permits(), namespace.isEmpty() ? null : namespace, maxWait, lease, returns,
                annotation.onWaitTimeout(), minHold, annotation.failClosed());
    }

    private static boolean returnsNothing(Method method, ResolvableType returned, LockedMethod.Returns returns) {
        if (KotlinDetector.isSuspendingFunction(method)) {
            // Compared by name, so that this class needs no Kotlin.
            Class<?> result = returned.resolve();
            return result != null && (result.getName().equals("kotlin.Unit") || result == Void.class);
        }
        if (returns == LockedMethod.Returns.VALUE) {
            return returned.resolve() == void.class || returned.resolve() == Void.class;
        }
        return returned.hasGenerics() && returned.getGeneric(0).resolve() == Void.class;
    }

    /**
     * The return type as the bean's class makes it: a class type variable ({@code R handle(..)} in a
     * {@code Handler<R>}) is what the subclass gives, a {@code Mono} or a {@code ResponseEntity<Flux<T>>} say, which
     * decides how the lock follows the method, as the entity parameters' types are resolved. A suspend function's is
     * its result's, {@code T} of its last parameter, {@code Continuation<? super T>}: the wildcard resolves, and gives
     * its generics, as {@code T}.
     */
    private static ResolvableType returnType(Method method, Class<?> targetClass) {
        if (KotlinDetector.isSuspendingFunction(method)) {
            MethodParameter continuation = new MethodParameter(method, method.getParameterCount() - 1);
            return ResolvableType.forMethodParameter(asTheBeanMakesIt(continuation, targetClass)).getGeneric(0);
        }
        return ResolvableType.forMethodParameter(asTheBeanMakesIt(new MethodParameter(method, -1), targetClass));
    }

    /** {@code parameter} (or the return type) with the class type variables the bean's class gives resolved. */
    private static MethodParameter asTheBeanMakesIt(MethodParameter parameter, Class<?> targetClass) {
        return targetClass != null && parameter.getDeclaringClass().isAssignableFrom(targetClass)
                ? parameter.withContainingClass(targetClass) : parameter;
    }

    /** The return type as declared (a class type variable by its name), a suspend function's result's. */
    private static String resultName(Method method) {
        Type result = KotlinDetector.isSuspendingFunction(method) ? declaredSuspendResult(method) : null;
        return result != null ? result.getTypeName() + " (suspend function)"
                : method.getGenericReturnType().getTypeName();
    }

    /**
     * What a suspend function is declared to return: {@code T} of its last parameter, {@code Continuation<? super T>},
     * or {@code null} if that cannot be read.
     */
    private static Type declaredSuspendResult(Method method) {
        Type[] parameters = method.getGenericParameterTypes();
        if (!(parameters[parameters.length - 1] instanceof ParameterizedType continuation)) {
            return null;
        }
        Type result = continuation.getActualTypeArguments()[0];
        return result instanceof WildcardType wildcard && wildcard.getLowerBounds().length == 1
                ? wildcard.getLowerBounds()[0] : result;
    }

    private Expression parseEntity(String source, Method method, Class<?> targetClass, String description) {
        if (source.isBlank()) {
            throw invalid(description, "entity is empty; give a SpEL expression such as \"#orderId\"");
        }
        Expression expression;
        try {
            expression = evaluator.parse(source, new AnnotatedElementKey(method, targetClass));
        }
        catch (ParseException ex) {
            throw invalid(description, "entity expression '" + source + "' does not parse: " + ex.getMessage(), ex);
        }
        List<String> parameters = parameterNames(method);
        for (String variable : LockExpressionEvaluator.variables(expression)) {
            if (position(variable) >= argumentCount(method) && (parameters == null || !parameters.contains(variable))) {
                throw invalid(description, "entity expression '" + source + "' refers to #" + variable + ", but the"
                        + " method has " + describeParameters(method, parameters));
            }
            if (BUILT_IN_VARIABLE.matcher(variable).matches() || parameters != null && parameters.contains(variable)) {
                continue;
            }
            if (parameters == null) {
                throw invalid(description, "entity expression '" + source + "' refers to #" + variable
                        + ", but parameter names are not available: compile with -parameters"
                        + " (spring-boot-starter-parent and Boot's Gradle plugin set it; otherwise"
                        + " <parameters>true</parameters> in maven-compiler-plugin), or use #p0, #p1...");
            }
            throw invalid(description, "entity expression '" + source + "' refers to #" + variable
                    + ", which is not a parameter of the method; parameters are " + parameters);
        }
        for (String bean : LockExpressionEvaluator.beanReferences(expression)) {
            if (beanFactory != null && !beanFactory.containsBean(bean)) {
                throw invalid(description, "entity expression '" + source + "' refers to the bean '" + bean
                        + "', which the context does not have");
            }
        }
        EntityPropertyPath path = EntityPropertyPath.of(expression);
        MethodParameter parameter = path == null ? null : parameter(path.variable(), method, targetClass, parameters);
        if (parameter != null) {
            EntityPropertyPath.Resolution resolved = path.resolve(DeclaredTypes.of(parameter));
            if (resolved.missing() != null) {
                throw noSuchProperty(source, resolved.missing(), resolved.type().toClass(), description);
            }
            if (resolved.type() != null && path.whole()) {
                checkEntityType(resolved.type(), source, description);
            }
        }
        return expression;
    }

    /**
     * Refuses a declared type whose values are no entity: a future or a publisher (an interface or an abstract class
     * too: each of its values is one), or a concrete class with Object's toString(). A collection's or an array's
     * elements are the entities: their strings are checked at the call. Only a concrete class is refused for its
     * string: an Object's, an interface's or an abstract class's values may have a toString() of their own (a call
     * checks each value).
     */
    private static void checkEntityType(ResolvableType declared, String source, String description) {
        Class<?> entityType = entityType(declared);
        if (entityType != null && isLaterValue(entityType)) {
            throw invalid(description, "entity expression '" + source + "' is a " + entityType.getName() + ", "
                    + LATER_VALUE + ". " + LATER_VALUE_FIX);
        }
        ResolvableType value = optionalValue(declared);
        Class<?> type = ClassUtils.resolvePrimitiveIfNecessary(value.toClass());
        if (!Collection.class.isAssignableFrom(type) && !type.isArray() && type != Object.class
                && !Modifier.isAbstract(type.getModifiers()) && hasIdentityString(type)) {
            throw invalid(description, "entity expression '" + source + "' is a" + (value == declared ? ""
                    : "n Optional of a") + " " + type.getName() + ", whose toString() is Object's: " + IDENTITY_STRING
                    + ". Name a stable key such as " + source + ".id, or give " + type.getSimpleName()
                    + " a toString() that names the entity");
        }
    }

    /**
     * What a call locks of a value of {@code type}: an {@code Optional}'s value (its own string, Optional[order-1],
     * names no entity); else {@code type} itself.
     */
    private static ResolvableType optionalValue(ResolvableType type) {
        return type.toClass() == Optional.class ? type.getGeneric(0) : type;
    }

    private static QueueLockedConfigurationException noSuchProperty(String source, String property, Class<?> type,
            String description) {
        String suffix = StringUtils.capitalize(property);
        Set<String> properties = EntityPropertyPath.properties(type);
        return invalid(description, "entity expression '" + source + "' reads the property '" + property + "' of "
                + type.getName() + ", which has none of that name (no get" + suffix + "(), is" + suffix + "() or "
                + property + "() method, no public field " + property + ") and is final, so no value can have it; "
                + (properties.isEmpty() ? "it has no getters, record components or public fields"
                        : "its properties are " + properties));
    }

    /** Whether a value of class {@code type} turns into Object's string, {@code Name@1b6d3586}, one per instance. */
    static boolean hasIdentityString(Class<?> type) {
        return IDENTITY_STRING_CLASSES.get(type);
    }

    /**
     * Whether a value of class {@code type} is a future or a publisher of the entity rather than the entity: its
     * string is not the value's.
     */
    static boolean isLaterValue(Class<?> type) {
        return LATER_VALUE_CLASSES.get(type);
    }

    /**
     * The parameter a variable names ({@code #order}, {@code #p0}), its generics resolved against the target class,
     * or {@code null}.
     */
    private static MethodParameter parameter(String variable, Method method, Class<?> targetClass,
            List<String> parameters) {
        // SpEL binds #p1 and #a1 to the second argument, then each parameter's name, in order: the later binding wins.
        int named = parameters != null ? parameters.indexOf(variable) : -1;
        int positional = position(variable) < argumentCount(method) ? position(variable) : -1;
        int index = Math.max(named, positional);
        if (index < 0 || index >= argumentCount(method)) {
            return null;
        }
        return asTheBeanMakesIt(new MethodParameter(method, index), targetClass);
    }

    /**
     * The declared type of the entities a value of {@code type} gives: its elements' if it is a collection or an
     * array, as a call locks each of them, an {@code Optional}'s value's (also as an element); {@code null} if not
     * known.
     */
    private static Class<?> entityType(ResolvableType type) {
        ResolvableType value = optionalValue(type);
        ResolvableType element = value.isArray() ? value.getComponentType()
                : Collection.class.isAssignableFrom(value.toClass()) ? value.asCollection().getGeneric(0) : value;
        return optionalValue(element).resolve();
    }

    /** The index {@code #p3} or {@code #a3} names, {@code -1} for any other variable. */
    private static int position(String variable) {
        Matcher positional = POSITIONAL_VARIABLE.matcher(variable);
        if (!positional.matches()) {
            return -1;
        }
        String digits = positional.group(1);
        return digits.length() > 9 ? Integer.MAX_VALUE : Integer.parseInt(digits);
    }

    /** The arguments an expression sees: a suspend function's last, its {@code Continuation}, is not one of them. */
    private static int argumentCount(Method method) {
        return method.getParameterCount() - (KotlinDetector.isSuspendingFunction(method) ? 1 : 0);
    }

    private static String describeParameters(Method method, List<String> names) {
        int count = argumentCount(method);
        if (count == 0) {
            return "no parameters";
        }
        List<String> described = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            described.add("#p" + i + (names == null || i >= names.size() ? "" : " (" + names.get(i) + ")"));
        }
        return count + " parameter" + (count == 1 ? "" : "s") + ": " + String.join(", ", described);
    }

    private List<String> parameterNames(Method method) {
        if (method.getParameterCount() == 0) {
            return List.of();
        }
        String[] names = evaluator.parameterNames(method);
        return names == null ? null : Arrays.asList(names);
    }

    private String resolve(String raw, String attribute, String description) {
        try {
            return placeholders.resolveRequiredPlaceholders(raw).trim();
        }
        catch (IllegalArgumentException ex) {
            throw invalid(description, attribute + " '" + raw + "': " + ex.getMessage(), ex);
        }
    }

    /** A bare number but 0: a duration without its unit. */
    private static final Pattern BARE_NUMBER = Pattern.compile("\\s*[-+]?0*[1-9]\\d*\\s*");

    private Duration duration(String raw, String attribute, String description) {
        String value = resolve(raw, attribute, description);
        if (value.isEmpty()) {
            return null;
        }
        if (attribute.equals("maxWait") && value.equalsIgnoreCase("infinite")) {
            return LockRequest.WAIT_FOREVER;
        }
        if (BARE_NUMBER.matcher(value).matches()) {
            // Read as milliseconds, lease = "60" was a 60 ms lease that every call lost (as for the properties,
            // UnitlessDurationBindHandlerAdvisor); 0 means the same in every unit.
            String shown = value.equals(raw) ? "'" + raw + "'" : "'" + raw + "' (resolved to '" + value + "')";
            throw invalid(description, attribute + " " + shown + " has no unit; write it: " + value.trim() + "s for"
                    + " seconds, " + value.trim() + "ms if milliseconds were meant (also m, h, d, or PT1M)");
        }
        try {
            return DurationStyle.detectAndParse(value);
        }
        catch (IllegalArgumentException ex) {
            String shown = value.equals(raw) ? "'" + raw + "'" : "'" + raw + "' (resolved to '" + value + "')";
            throw invalid(description, attribute + " " + shown + " is not a duration; use e.g. 60s, 500ms, 2m or"
                    + " PT1M" + (attribute.equals("maxWait") ? ", 0 for no wait, or infinite" : ""), ex);
        }
    }

    /**
     * How the lock follows the method: {@code CompletableFuture} / {@code CompletionStage} until they complete,
     * {@code Mono} / {@code Flux} (with reactor-core), Kotlin suspend functions (one returning a {@code Flow} as a
     * {@code Flux}) and Kotlin {@code Flow} (with kotlinx-coroutines-reactor) while they run; throws for other
     * asynchronous types, whose work would outlast the lock, and for Kotlin's without kotlinx-coroutines-reactor.
     */
    private static LockedMethod.Returns returns(Method method, ResolvableType returned, Class<?> targetClass,
            String description) {
        // A suspend function returns Object; its result type (returned) is read below.
        Class<?> type = KotlinDetector.isSuspendingFunction(method) ? method.getReturnType()
                : returned.resolve(method.getReturnType());
        Class<?> owner = targetClass != null ? targetClass : method.getDeclaringClass();
        if (type == CompletableFuture.class || type == CompletionStage.class) {
            refuseLaterBody(returned.getGeneric(0), type.getSimpleName() + " of ", owner, description);
            return LockedMethod.Returns.FUTURE;
        }
        boolean reactor = ClassUtils.isPresent(MONO, method.getDeclaringClass().getClassLoader());
        if (reactor && type.getName().equals(MONO)) {
            refuseLaterBody(returned.getGeneric(0), "Mono of ", owner, description);
            return LockedMethod.Returns.MONO;
        }
        if (reactor && type.getName().equals(FLUX)) {
            return LockedMethod.Returns.FLUX;
        }
        // Without it Spring calls a suspend function as a plain method, and knows no Flow or Deferred as reactive.
        boolean coroutinesReactor = reactor
                && ClassUtils.isPresent(COROUTINES_REACTOR, method.getDeclaringClass().getClassLoader());
        if (KotlinDetector.isSuspendingFunction(method)) {
            if (!coroutinesReactor) {
                throw invalid(description, "is a Kotlin suspend function, which needs reactor-core and"
                        + " kotlinx-coroutines-reactor on the class path (Spring AOP calls it through a Mono only with"
                        + " them): add org.jetbrains.kotlinx:kotlinx-coroutines-reactor (it brings reactor-core)");
            }
            // Spring calls a suspend function that returns a Flow as a Flux of its elements, and the proxy turns the
            // Publisher it gets back into a Flow: many elements, not one. Any other, as a Mono of its result.
            Class<?> result = returned.toClass();
            if (KOTLIN_FLOW.equals(result.getName())) {
                return LockedMethod.Returns.FLUX;
            }
            if (isLaterWork(result, owner)) {
                // Spring hands on a future or a Deferred as the Mono's value: its work goes on after the release.
                throw laterWork("suspend function's " + result.getName(), result, description);
            }
            refuseLaterBody(returned, "suspend function's ", owner, description);
            return LockedMethod.Returns.SUSPEND;
        }
        if (type.getName().equals(KOTLIN_FLOW)) {
            if (!coroutinesReactor) {
                throw invalid(description, "returns a Kotlin Flow (" + KOTLIN_FLOW + "), which @QueueLocked holds"
                        + " while it is collected only with kotlinx-coroutines-reactor on the class path; without it"
                        + " the lock would be held only while the method creates the flow, not while the flow runs."
                        + " Add org.jetbrains.kotlinx:kotlinx-coroutines-reactor (it brings reactor-core). "
                        + KOTLIN_FIX);
            }
            return LockedMethod.Returns.FLOW;
        }
        if (isLaterWork(type, owner)) {
            throw laterWork(type.getName(), type, description);
        }
        refuseLaterBody(returned, "", owner, description);
        return LockedMethod.Returns.VALUE;
    }

    /**
     * Spring MVC and WebFlux stream the body of a {@code ResponseEntity} (also one a future or a {@code Mono} gives)
     * as they would the body itself: after the method's work, and its lock, are done.
     */
    private static void refuseLaterBody(ResolvableType entity, String around, Class<?> owner, String description) {
        Class<?> type = entity.resolve();
        if (type == null || !isA(type, HTTP_ENTITY)) {
            return;
        }
        Class<?> body = entity.as(ClassUtils.resolveClassName(HTTP_ENTITY, type.getClassLoader())).getGeneric(0)
                .resolve();
        if (body != null && isLaterWork(body, owner)) {
            throw laterWork(around + type.getName() + " of " + body.getName(), body, description);
        }
    }

    /** {@code returned} describes the return type, {@code type} the one refused in it. */
    private static QueueLockedConfigurationException laterWork(String returned, Class<?> type, String description) {
        return invalid(description, "returns " + returned + ", whose work goes on after the method returns: the lock"
                + " would be released before it is done. " + SUPPORTED + ". Return one of those, or take the lock"
                + " inside the asynchronous work with LockTemplate" + (isKotlinJob(type) ? ". " + KOTLIN_JOB_FIX
                : isKotlinLaterWork(type) ? ". " + KOTLIN_FIX : ""));
    }

    /**
     * The failure of a call that returned work the lock cannot follow through a return type that did not say so
     * ({@code Object}, a type variable): seen only at the call, it is told then, with the type to declare.
     */
    static IllegalStateException undeclaredLaterWork(LockedMethod locked, Class<?> returned) {
        // A future first: Spring's adapters know it too. What is left but a publisher is Spring MVC's later work.
        String declare = locked.returns() == LockedMethod.Returns.SUSPEND ? (isLaterWork(returned)
                        ? "Await it inside the suspend function (await() of a future, a Deferred or a publisher) so"
                                + " that the lock covers its work"
                        : "Call it inside the suspend function and return its result, so that the lock covers its"
                                + " work") // a controller's Callable, which Spring MVC would run later
                : isA(returned, KOTLIN_DEFERRED) ? "Return no Deferred: " + KOTLIN_FIX
                : isKotlinJob(returned) ? "Return no Job: " + KOTLIN_JOB_FIX
                : isA(returned, KOTLIN_FLOW) ? "Declare the return type as Flow so the lock follows it"
                : !CompletionStage.class.isAssignableFrom(returned) && !Future.class.isAssignableFrom(returned)
                        && (isA(returned, PUBLISHER) || Flow.Publisher.class.isAssignableFrom(returned)
                        || ReactiveAdapterRegistry.getSharedInstance().getAdapter(returned) != null)
                        ? "Declare the return type as Mono or Flux so the lock follows it"
                        : "Declare the return type as CompletableFuture or CompletionStage so the lock follows it";
        return undeclared(locked, "a " + returned.getName(), "its work goes on after the method returned", declare);
    }

    /**
     * The failure of a call whose {@code HttpEntity} (a {@code ResponseEntity}) has a body that is work still going
     * on ({@link #isUnfinishedWork}), seen through a return type that did not say so ({@code Object},
     * {@code ResponseEntity<?>}, a {@code Mono} of one...), as the start refuses a declared one: Spring MVC and
     * WebFlux stream the body after the method returned. {@code null} for any other value, an entity with a body
     * done or a plain one.
     */
    static IllegalStateException unfinishedBody(Object returned, LockedMethod locked, Class<?> owner) {
        if (returned == null || !HTTP_ENTITIES.get(returned.getClass())) {
            return null;
        }
        Object body = HttpEntityBody.of(returned);
        if (!isUnfinishedWork(body, owner)) {
            return null;
        }
        return undeclared(locked, "a " + returned.getClass().getName() + " whose body is a "
                + body.getClass().getName(), "its body is streamed after the method returned", "Make the"
                + " body's value inside the method (await or collect it) and return that, or return the work itself"
                + " through a declared return type the lock follows");
    }

    private static IllegalStateException undeclared(LockedMethod locked, String returned, String why,
            String declare) {
        return new IllegalStateException("@QueueLocked " + locked.description() + " returned " + returned
                + " through its return type " + locked.method().getGenericReturnType().getTypeName() + ": " + why
                + ", where the lock cannot follow it, so the lock was released and the call fails. " + declare + " ("
                + SUPPORTED + "), or take the lock inside the asynchronous work with LockTemplate");
    }

    /** Reads an {@code HttpEntity}'s body; loaded only for one, so that spring-web is needed only then. */
    private static final class HttpEntityBody {

        static Object of(Object entity) {
            return ((HttpEntity<?>) entity).getBody();
        }
    }

    /**
     * Whether a value of {@code type} stands for work done after the method returned. A {@code Callable} does only
     * as what a controller returns (Spring MVC runs it later); elsewhere it is a value like any other.
     */
    private static boolean isLaterWork(Class<?> type, Class<?> owner) {
        return isLaterWork(type) || isControllersCallable(type, owner);
    }

    private static boolean isControllersCallable(Class<?> type, Class<?> owner) {
        return owner != null && Callable.class.isAssignableFrom(type) && CONTROLLERS.get(owner);
    }

    /**
     * Whether {@code value}, returned by a method of {@code owner} (or {@code null}), is work still going on after the
     * method returned: late work ({@link #isLaterValue}, or a controller's {@code Callable}) not yet done. A future
     * that is done holds a value: nothing runs after the release. A stage is asked through its
     * {@code toCompletableFuture()}: a minimal stage's own {@code isDone()} throws.
     */
    static boolean isUnfinishedWork(Object value, Class<?> owner) {
        if (value == null || !isLaterValue(value.getClass()) && !isControllersCallable(value.getClass(), owner)) {
            return false;
        }
        if (value instanceof CompletionStage<?> stage) {
            CompletableFuture<?> future;
            try {
                future = stage.toCompletableFuture();
            }
            catch (UnsupportedOperationException cannotTell) {
                return true; // taken as running, so followed or refused: released under it, it could run unlocked
            }
            return !future.isDone();
        }
        return !(value instanceof Future<?> future && future.isDone());
    }

    /**
     * Whether a value of {@code type} stands for work done later wherever it is: a future, a publisher, a Kotlin
     * {@code Flow}, {@code Job} or {@code Deferred} (a {@code Job} with a result; by name: also without
     * kotlinx-coroutines-reactor, which registers the reactive adapters of Flow and Deferred).
     */
    private static boolean isLaterWork(Class<?> type) {
        return CompletionStage.class.isAssignableFrom(type) || Future.class.isAssignableFrom(type)
                || Flow.Publisher.class.isAssignableFrom(type)
                || LATER_WORK.stream().anyMatch(name -> isA(type, name))
                || isKotlinLaterWork(type) || ReactiveAdapterRegistry.getSharedInstance().getAdapter(type) != null;
    }

    private static boolean isKotlinLaterWork(Class<?> type) {
        return isA(type, KOTLIN_FLOW) || isA(type, KOTLIN_JOB);
    }

    /** A Kotlin {@code Job} that is no {@code Deferred}: a coroutine with no result. */
    private static boolean isKotlinJob(Class<?> type) {
        return isA(type, KOTLIN_JOB) && !isA(type, KOTLIN_DEFERRED);
    }

    private static boolean isA(Class<?> type, String className) {
        ClassLoader classLoader = type.getClassLoader();
        if (classLoader == null || !ClassUtils.isPresent(className, classLoader)) {
            return false;
        }
        return ClassUtils.resolveClassName(className, classLoader).isAssignableFrom(type);
    }

    static String describe(Method method, Class<?> targetClass) {
        Class<?> owner = targetClass != null ? targetClass : method.getDeclaringClass();
        return owner.getName() + "." + method.getName() + Arrays.stream(method.getParameterTypes())
                .map(Class::getSimpleName).collect(Collectors.joining(", ", "(", ")"));
    }

    private static QueueLockedConfigurationException invalid(String description, String problem) {
        return invalid(description, problem, null);
    }

    private static QueueLockedConfigurationException invalid(String description, String problem, Throwable cause) {
        return new QueueLockedConfigurationException("@QueueLocked on " + description + ": " + problem, cause);
    }
}
