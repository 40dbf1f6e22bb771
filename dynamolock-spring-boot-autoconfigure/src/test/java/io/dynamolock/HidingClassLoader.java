package io.dynamolock;

import java.io.IOException;
import java.io.InputStream;
import java.util.List;

/**
 * An application without an optional library, for a check that the classes touching it only in one place load, link
 * and run without it: hides every class whose name starts with one of the given prefixes, and defines one package's
 * classes itself (child first: they must link here, where the library is missing, not in the parent, where it is).
 */
public final class HidingClassLoader extends ClassLoader {

    private final ClassLoader parent;
    private final String definedPackage;
    private final List<String> hidden;

    /**
     * @param definedPackage the package whose classes this loader defines
     * @param hiddenPrefixes the starts of the hidden classes' names, as {@code "kotlin."}
     */
    public HidingClassLoader(ClassLoader parent, String definedPackage, String... hiddenPrefixes) {
        super(parent);
        this.parent = parent;
        this.definedPackage = definedPackage + ".";
        this.hidden = List.of(hiddenPrefixes);
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        if (hidden.stream().anyMatch(name::startsWith)) {
            throw new ClassNotFoundException(name + " (hidden: not in this application)");
        }
        if (!name.startsWith(definedPackage)) {
            return parent.loadClass(name);
        }
        synchronized (getClassLoadingLock(name)) {
            Class<?> loaded = findLoadedClass(name);
            if (loaded != null) {
                return loaded;
            }
            try (InputStream in = parent.getResourceAsStream(name.replace('.', '/') + ".class")) {
                if (in == null) {
                    throw new ClassNotFoundException(name);
                }
                byte[] bytes = in.readAllBytes();
                return defineClass(name, bytes, 0, bytes.length);
            }
            catch (IOException ex) {
                throw new ClassNotFoundException(name, ex);
            }
        }
    }
}
