package io.dynamolock.annotation;

import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.springframework.core.MethodParameter;
import org.springframework.core.ResolvableType;

/**
 * The declared type of the values of a parameter or a property, saying only what holds of every value: a type
 * argument the owner gives, else for a type variable its bound and for {@code ? extends X} X (a value may be of any
 * subtype, as of a declared class), and for {@code ? super X} Object (a value may be of any supertype).
 * <p>
 * Spring's {@code ResolvableType} alone would read {@code ? super X} as X, and a generic method's own {@code <T>} as
 * the type argument of its class's variable of that name, as it matches variables by name; either makes a final type
 * of a value that may be anything else. So the types built here are closed: classes with closed type arguments,
 * nothing left for Spring to resolve.
 */
final class DeclaredTypes {

    private static final ResolvableType OBJECT = ResolvableType.forClass(Object.class);

    private DeclaredTypes() {
    }

    /** The type of a parameter's values, its class's type variables given by the class the method is called on. */
    static ResolvableType of(MethodParameter parameter) {
        ResolvableType owner = as(ResolvableType.forClass(parameter.getContainingClass()),
                parameter.getDeclaringClass());
        return close(parameter.getGenericParameterType(), owner);
    }

    /** The type of the values a field or a getter gives, read from a value of the closed type {@code owner}. */
    static ResolvableType of(Member member, ResolvableType owner) {
        Type type = member instanceof Method getter ? getter.getGenericReturnType() : ((Field) member).getGenericType();
        return close(type, as(owner, member.getDeclaringClass()));
    }

    /** The closed {@code type} seen as its supertype {@code target}, with the type arguments it gives it, or null. */
    private static ResolvableType as(ResolvableType type, Class<?> target) {
        Class<?> rawType = type.toClass();
        if (rawType == target) {
            return type;
        }
        if (!target.isAssignableFrom(rawType)) {
            return null;
        }
        List<Type> supertypes = new ArrayList<>(Arrays.asList(rawType.getGenericInterfaces()));
        if (rawType.getGenericSuperclass() != null) {
            supertypes.add(0, rawType.getGenericSuperclass());
        }
        for (Type supertype : supertypes) {
            ResolvableType found = as(close(supertype, type), target);
            if (found != null) {
                return found;
            }
        }
        return null;
    }

    /** What every value of a declared type is, the type variables of the closed type {@code owner}'s class in it. */
    private static ResolvableType close(Type type, ResolvableType owner) {
        if (type instanceof Class<?> rawType) {
            return ResolvableType.forClass(rawType);
        }
        if (type instanceof ParameterizedType parameterized) {
            Type[] arguments = parameterized.getActualTypeArguments();
            ResolvableType[] closed = new ResolvableType[arguments.length];
            for (int i = 0; i < arguments.length; i++) {
                closed[i] = close(arguments[i], owner);
            }
            return ResolvableType.forClassWithGenerics((Class<?>) parameterized.getRawType(), closed);
        }
        if (type instanceof GenericArrayType array) {
            return ResolvableType.forArrayComponent(close(array.getGenericComponentType(), owner));
        }
        if (type instanceof WildcardType wildcard) {
            return wildcard.getLowerBounds().length > 0 ? OBJECT : close(wildcard.getUpperBounds()[0], owner);
        }
        if (type instanceof TypeVariable<?> variable) {
            ResolvableType argument = argument(variable, owner);
            return argument != null ? argument : bound(variable, owner);
        }
        return OBJECT;
    }

    /**
     * The type argument {@code owner} gives a variable of its class; null for a raw type and for any other variable:
     * a method's, or an enclosing class's.
     */
    private static ResolvableType argument(TypeVariable<?> variable, ResolvableType owner) {
        if (owner == null || !(owner.getType() instanceof ParameterizedType)
                || variable.getGenericDeclaration() != owner.toClass()) {
            return null;
        }
        return owner.getGeneric(Arrays.asList(owner.toClass().getTypeParameters()).indexOf(variable));
    }

    /** An unresolved variable's values are its bound's; of that bound, only its class, as it may name the variable. */
    private static ResolvableType bound(TypeVariable<?> variable, ResolvableType owner) {
        Type bound = variable.getBounds()[0];
        if (bound instanceof TypeVariable<?>) {
            return close(bound, owner);
        }
        return ResolvableType.forClass(
                bound instanceof ParameterizedType parameterized ? (Class<?>) parameterized.getRawType()
                        : (Class<?>) bound);
    }
}
