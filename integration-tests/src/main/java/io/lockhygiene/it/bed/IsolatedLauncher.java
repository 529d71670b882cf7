package io.lockhygiene.it.bed;

import java.io.File;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.Arrays;

/**
 * Runs a service in a child class loader, as a Spring Boot fat jar or a servlet container does: the
 * system class path holds only this launcher (and the agent, with -javaagent); pgjdbc, the pool and the
 * service live in the child. Args: CHILD_CLASSPATH MAIN_CLASS ARGS...
 */
public final class IsolatedLauncher {
    public static void main(String[] args) throws Exception {
        String[] entries = args[0].split(File.pathSeparator);
        URL[] urls = new URL[entries.length];
        for (int i = 0; i < entries.length; i++) {
            urls[i] = new File(entries[i]).toURI().toURL();
        }
        try (URLClassLoader child = new URLClassLoader("service", urls, ClassLoader.getSystemClassLoader())) {
            Thread.currentThread().setContextClassLoader(child);
            Class<?> main = Class.forName(args[1], true, child);
            System.out.println("[launcher] " + args[1] + " loaded by " + main.getClassLoader().getName()
                    + "; pgjdbc visible to the system class loader: " + visible("org.postgresql.Driver"));
            Method m = main.getMethod("main", String[].class);
            m.invoke(null, (Object) Arrays.copyOfRange(args, 2, args.length));
        }
    }

    private static boolean visible(String name) {
        try {
            Class.forName(name, false, ClassLoader.getSystemClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }
}
