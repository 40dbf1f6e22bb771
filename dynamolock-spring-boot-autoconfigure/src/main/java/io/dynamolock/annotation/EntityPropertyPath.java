package io.dynamolock.annotation;

import java.lang.reflect.Field;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.springframework.core.KotlinDetector;
import org.springframework.core.NativeDetector;
import org.springframework.core.ResolvableType;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.CompoundExpression;
import org.springframework.expression.spel.ast.PropertyOrFieldReference;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

/**
 * The properties an entity expression reads off a variable before anything else ({@code #order.customer.id},
 * {@code #p0?.id}), followed through the declared types as SpEL's {@code ReflectivePropertyAccessor} follows them
 * through the values: a getter {@code getX()}, a boolean {@code isX()}, an accessor {@code x()} (a record's), then a
 * public field. A property a final type lacks can be on no value of it, so its expression fails every call that gets
 * that far; a non-final type's value may be a subclass with the property, so the walk stops there, as it does at
 * anything it cannot be sure of (a map, whose entries an evaluation context may read as properties; an
 * {@code Optional}, which {@code ?.} looks into; a {@code Class}, whose static members SpEL reads; an array). The
 * declared types are {@link DeclaredTypes}': a generic one is final only where every value's class is (not so under
 * {@code ? super X}).
 *
 * @param variable the variable the path starts at, without its {@code #}
 * @param properties the names read, in order
 * @param whole whether the expression is this path and nothing more
 */
record EntityPropertyPath(String variable, List<String> properties, boolean whole) {

    /** What the walk found: the declared type at the end, or the final type without the property; else unknown. */
    record Resolution(ResolvableType type, String missing) {

        static final Resolution UNKNOWN = new Resolution(null, null);
    }

    /**
     * {@code #root} and {@code #this}: SpEL's root object, not the variables of those names (a parameter called root
     * is not what {@code #root} reads).
     */
    private static final Set<String> SPEL_OBJECTS = Set.of("root", "this");

    /** The path an expression starts with, or {@code null} if it does not start with a parameter's variable. */
    static EntityPropertyPath of(Expression expression) {
        if (!(expression instanceof SpelExpression spel)) {
            return null;
        }
        SpelNode ast = spel.getAST();
        SpelNode first = ast instanceof CompoundExpression ? ast.getChild(0) : ast;
        if (!(first instanceof VariableReference variable) || SPEL_OBJECTS.contains(name(variable))) {
            return null;
        }
        if (first == ast) {
            return new EntityPropertyPath(name(variable), List.of(), true);
        }
        List<String> properties = new ArrayList<>();
        for (int i = 1; i < ast.getChildCount() && ast.getChild(i) instanceof PropertyOrFieldReference property;
                i++) {
            properties.add(property.getName());
        }
        return new EntityPropertyPath(name(variable), List.copyOf(properties),
                properties.size() == ast.getChildCount() - 1);
    }

    private static String name(VariableReference variable) {
        return variable.toStringAST().substring(1);
    }

    /**
     * Follows the path from the declared type of its variable: the type it ends in, if each step's is certain; the
     * type a property cannot be read from, with that property; or {@link Resolution#UNKNOWN}.
     */
    Resolution resolve(ResolvableType start) {
        if (!properties.isEmpty() && NativeDetector.inNativeImage()) {
            // Its reflection lists only the members the image's metadata names: an absent one may be a missing hint.
            return Resolution.UNKNOWN;
        }
        ResolvableType type = start;
        for (String property : properties) {
            Class<?> owner = ClassUtils.resolvePrimitiveIfNecessary(type.toClass());
            if (!followable(owner) || kotlin(owner)) {
                return Resolution.UNKNOWN;
            }
            if (owner != type.toClass()) {
                type = ResolvableType.forClass(owner); // SpEL reads the properties of a primitive's box
            }
            boolean exact = Modifier.isFinal(owner.getModifiers());
            Reader reader;
            try {
                reader = reader(owner, property);
            }
            catch (RuntimeException | LinkageError unreadable) {
                // A signature naming a class not on the class path, or a native image without the metadata.
                return Resolution.UNKNOWN;
            }
            if (reader == null) {
                return exact ? new Resolution(ResolvableType.forClass(owner), property) : Resolution.UNKNOWN;
            }
            if (!exact && !reader.first()) {
                // A subclass may declare a reader SpEL tries first, of another type.
                return Resolution.UNKNOWN;
            }
            type = DeclaredTypes.of(reader.member(), type);
        }
        return new Resolution(type, null);
    }

    private static boolean followable(Class<?> type) {
        return !type.isArray() && !Map.class.isAssignableFrom(type) && type != Optional.class && type != Class.class;
    }

    /**
     * Whether a Kotlin class declares some of {@code type}'s members: SpEL reads a Kotlin property by its Kotlin
     * name, ignoring case, through whatever getter Kotlin made ({@code getId-<hash>} of a value class, an
     * {@code internal} one's {@code getX$module}, a {@code @JvmName}), which Java's names do not tell.
     */
    private static boolean kotlin(Class<?> type) {
        for (Class<?> declaring = type; declaring != null; declaring = declaring.getSuperclass()) {
            if (KotlinDetector.isKotlinType(declaring)) {
                return true;
            }
        }
        return ClassUtils.getAllInterfacesForClassAsSet(type).stream().anyMatch(KotlinDetector::isKotlinType);
    }

    /** The member SpEL reads {@code property} through, and whether it is the first SpEL tries. */
    private record Reader(Member member, boolean first) {
    }

    private static Reader reader(Class<?> type, String property) {
        // As SpEL: public methods, those that are not bridges first, so that a covariant return type is the one read.
        Method[] methods = type.getMethods();
        Arrays.sort(methods, Comparator.comparing(Method::isBridge));
        // getX(), isX() of a boolean, x(): in SpEL's order.
        List<String> names = new ArrayList<>();
        suffixes(property).forEach(suffix -> names.add("get" + suffix));
        int getters = names.size();
        suffixes(property).forEach(suffix -> names.add("is" + suffix));
        names.add(property);
        search:
        for (int i = 0; i < names.size(); i++) {
            boolean bool = i >= getters && i < names.size() - 1;
            for (Method method : methods) {
                if (method.getName().equals(names.get(i)) && method.getParameterCount() == 0
                        && (!bool || isBoolean(method.getReturnType()))) {
                    if (method.getReturnType() == void.class) {
                        break search; // SpEL takes the first method it finds, and reads the field if that is void
                    }
                    return new Reader(method, i == 0);
                }
            }
        }
        return Arrays.stream(type.getFields()).filter(field -> field.getName().equals(property)).findFirst()
                .map(field -> new Reader(field, false)).orElse(null);
    }

    /** SpEL reads an {@code isX()} only of these types. */
    private static boolean isBoolean(Class<?> type) {
        return type == boolean.class || type == Boolean.class;
    }

    /** SpEL's suffixes of a property's methods, in its order: {@code xName} is read by getxName(), then getXName(). */
    private static List<String> suffixes(String property) {
        String suffix = property.length() > 1 && Character.isUpperCase(property.charAt(1)) ? property
                : StringUtils.capitalize(property);
        return suffix.isEmpty() || Character.isUpperCase(suffix.charAt(0)) ? List.of(suffix)
                : List.of(suffix, StringUtils.capitalize(suffix));
    }

    /**
     * The properties a value of {@code type} has, as the fix of a typo names them: getters, record components and
     * public fields, not static ones (constants), nor the plain methods SpEL would also read ({@code hashCode}).
     */
    static Set<String> properties(Class<?> type) {
        Set<String> properties = new TreeSet<>();
        for (Method method : type.getMethods()) {
            String name = method.getName();
            if (method.getParameterCount() != 0 || method.getReturnType() == void.class || name.equals("getClass")
                    || Modifier.isStatic(method.getModifiers())) {
                continue;
            }
            if (name.startsWith("get") && name.length() > 3) {
                properties.add(StringUtils.uncapitalizeAsProperty(name.substring(3)));
            }
            else if (name.startsWith("is") && name.length() > 2 && isBoolean(method.getReturnType())) {
                properties.add(StringUtils.uncapitalizeAsProperty(name.substring(2)));
            }
        }
        if (type.isRecord()) {
            Arrays.stream(type.getRecordComponents()).map(RecordComponent::getName).forEach(properties::add);
        }
        Arrays.stream(type.getFields()).filter(field -> !Modifier.isStatic(field.getModifiers())).map(Field::getName)
                .forEach(properties::add);
        return properties;
    }
}
