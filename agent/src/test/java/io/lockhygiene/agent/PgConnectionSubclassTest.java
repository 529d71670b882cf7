package io.lockhygiene.agent;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;

import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PgConnectionSubclassTest {

    /** The subclass implements every PGConnection method (forwarded, or GeneratedConnection's own). */
    @Test
    void theSubclassLeavesNoPgConnectionMethodAbstract() throws Exception {
        Class<?> made = PgConnectionSubclass.subclassFor(PGConnection.class);
        assertImplementsEveryPgConnectionMethod(made);
    }

    /**
     * The build wrote the subclass for this pgjdbc's PGConnection, and it is what the run-time writer makes
     * of the same interface (so a first connection gets the same class either way, and a stale file fails here).
     */
    @Test
    void theBuildsPgjdbcGetsThePregeneratedSubclassWhichEqualsTheRunTimeOne() {
        byte[] pregenerated = Pregenerated.subclass(PGConnection.class);
        assertNotNull(pregenerated, "no pregenerated subclass for the test class path's pgjdbc");
        assertArrayEquals(Pregenerate.subclass(PGConnection.class), pregenerated);
    }

    /** Another PGConnection class file (here: a class directory without one) has no key: written at run time. */
    @Test
    void aClassFileTheBuildDidNotSeeHasNoPregeneratedSubclass() {
        assertNull(Pregenerated.subclass(PgConnectionSubclassTest.class));
    }

    /** The run-time writer's class, for a pgjdbc the build did not see, leaves no method abstract either. */
    @Test
    void theRunTimeWrittenSubclassLeavesNoPgConnectionMethodAbstract() throws Exception {
        byte[] bytes = PgConnectionSubclass.write(PGConnection.class, PgConnectionSubclass.forwards(PGConnection.class));
        Class<?> made = new ClassLoader(PGConnection.class.getClassLoader()) {
            Class<?> define() {
                return defineClass("io.lockhygiene.agent.generated.LockHygienePGConnection", bytes, 0, bytes.length);
            }
        }.define();
        assertImplementsEveryPgConnectionMethod(made);
    }

    /**
     * The forwards are exactly PGConnection's abstract methods that GeneratedConnection does not implement,
     * as GeneratedConnection's own method table says (the slow way the list is no longer made).
     */
    @Test
    void theForwardsAreWhatGeneratedConnectionLacks() {
        java.util.Set<Method> lacking = new java.util.HashSet<>();
        for (Method m : PGConnection.class.getMethods()) {
            if (!Modifier.isAbstract(m.getModifiers())) {
                continue;
            }
            try {
                Method ours = io.lockhygiene.internal.jdbc.GeneratedConnection.class.getMethod(m.getName(), m.getParameterTypes());
                if (Modifier.isAbstract(ours.getModifiers())) {
                    lacking.add(m);
                }
            } catch (NoSuchMethodException e) {
                lacking.add(m);
            }
        }
        assertFalse(lacking.isEmpty());
        assertEquals(lacking, new java.util.HashSet<>(PgConnectionSubclass.forwards(PGConnection.class)));
    }

    /**
     * A PGConnection that is not in a local jar (a Spring Boot nested jar, say) is keyed through its class
     * loader's resource URL: a jar connection's entry, or the bytes behind any other URL, give the same key;
     * a resource found elsewhere than where the interface came from gives none.
     */
    @Test
    void aClassFileReachedOnlyThroughItsUrlHasTheSameKey(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        String key = Pregenerated.subclassKey(PGConnection.class);
        assertNotNull(key);
        java.net.URL jar = PGConnection.class.getProtectionDomain().getCodeSource().getLocation();
        try (java.net.URLClassLoader viaJar = new java.net.URLClassLoader(new java.net.URL[] {jar}, null)) {
            java.net.URL inJar = new java.net.URL("jar:" + jar + "!/");
            assertEquals(key, "PGConnection-" + Pregenerated.keyFromResource(viaJar, inJar));
            assertNull(Pregenerated.keyFromResource(viaJar, dir.toUri().toURL()), "another location's copy");
        }
        java.nio.file.Path copy = dir.resolve(Pregenerated.PG_CONNECTION_CLASS);
        java.nio.file.Files.createDirectories(copy.getParent());
        try (java.io.InputStream in = PGConnection.class.getResourceAsStream("PGConnection.class")) {
            java.nio.file.Files.copy(in, copy);
        }
        try (java.net.URLClassLoader viaDirectory = new java.net.URLClassLoader(new java.net.URL[] {dir.toUri().toURL()}, null)) {
            assertEquals(key, "PGConnection-" + Pregenerated.keyFromResource(viaDirectory, dir.toUri().toURL()));
        }
    }

    private static void assertImplementsEveryPgConnectionMethod(Class<?> made) throws NoSuchMethodException {
        assertTrue(PGConnection.class.isAssignableFrom(made));
        for (Method m : PGConnection.class.getMethods()) {
            Method implemented = made.getMethod(m.getName(), m.getParameterTypes());
            assertFalse(Modifier.isAbstract(implemented.getModifiers()), m.toString());
        }
    }
}
