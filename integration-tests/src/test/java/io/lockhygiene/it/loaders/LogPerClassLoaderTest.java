package io.lockhygiene.it.loaders;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 14, item 6: with LockHygiene loaded where SLF4J is not visible (the agent), each application's
 * messages go to its own SLF4J, found through the calling thread's context class loader, call by call.
 * Two child class loaders stand for two applications of one application server, each with its own SLF4J
 * writing to its own file; the first version resolved the sink once, from the first caller, and sent
 * every later application's messages to the first one's.
 */
class LogPerClassLoaderTest {

    private static URL[] entries(String... fragments) throws Exception {
        List<URL> urls = new ArrayList<>();
        for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
            for (String f : fragments) {
                if (e.contains(f)) {
                    urls.add(new File(e).toURI().toURL());
                }
            }
        }
        return urls.toArray(new URL[0]);
    }

    /** An "application": its own slf4j-api and slf4j-simple, configured to write to its own file. */
    private static URLClassLoader application(Path dir) throws Exception {
        Files.writeString(dir.resolve("simplelogger.properties"), "org.slf4j.simpleLogger.logFile="
                + dir.resolve("out.log").toAbsolutePath().toString().replace('\\', '/') + "\n");
        List<URL> urls = new ArrayList<>(Arrays.asList(entries("slf4j-api", "slf4j-simple")));
        urls.add(dir.toUri().toURL());
        return new URLClassLoader(urls.toArray(new URL[0]), ClassLoader.getPlatformClassLoader());
    }

    @Test
    void eachApplicationsMessagesGoToItsOwnSlf4j(@TempDir Path a, @TempDir Path b) throws Exception {
        URL[] driver = entries("driver" + File.separator + "target" + File.separator + "classes", "lockhygiene-driver");
        assertTrue(driver.length > 0, "the driver's classes are on the test class path");
        try (URLClassLoader appA = application(a); URLClassLoader appB = application(b);
             URLClassLoader ours = new URLClassLoader(driver, ClassLoader.getPlatformClassLoader())) {
            Method warn = ours.loadClass("io.lockhygiene.internal.log.Log").getMethod("warn", String.class, Object[].class);
            Thread me = Thread.currentThread();
            ClassLoader before = me.getContextClassLoader();
            try {
                me.setContextClassLoader(appA);
                warn.invoke(null, "message {} of application A", new Object[] {1});
                me.setContextClassLoader(appB);
                warn.invoke(null, "message {} of application B", new Object[] {2});
                me.setContextClassLoader(appA);
                warn.invoke(null, "message {} of application A", new Object[] {3});
            } finally {
                me.setContextClassLoader(before);
            }
        }
        String logA = Files.readString(a.resolve("out.log"), StandardCharsets.UTF_8);
        String logB = Files.readString(b.resolve("out.log"), StandardCharsets.UTF_8);
        assertTrue(logA.contains("message 1 of application A") && logA.contains("message 3 of application A"), logA);
        assertFalse(logA.contains("application B"), logA);
        assertTrue(logB.contains("message 2 of application B"), logB);
        assertFalse(logB.contains("application A"), logB);
    }
}
