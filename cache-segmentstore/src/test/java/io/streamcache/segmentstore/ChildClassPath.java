package io.streamcache.segmentstore;

import java.io.File;

/**
 * The class path for a child JVM that runs a test's main class: this JVM's class path plus its
 * module path (the tests run patched into the module, so the module and its dependencies are on
 * the module path; the child runs them all on the class path).
 */
public final class ChildClassPath {
    private ChildClassPath() {
    }

    /**
     * @return the class path and the module path of this JVM, joined.
     */
    public static String get() {
        final String classPath = System.getProperty("java.class.path", "");
        final String modulePath = System.getProperty("jdk.module.path", "");
        if (modulePath.isEmpty()) {
            return classPath;
        }
        return classPath.isEmpty() ? modulePath : classPath + File.pathSeparator + modulePath;
    }
}
