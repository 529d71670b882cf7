package io.lockhygiene.agent;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PgConnectionSubclassTest {

    /** The class-file listing (no reflection, no types loaded) must list exactly what reflection does. */
    @Test
    void pgConnectionsMethodsFromItsClassFileAreThoseReflectionFinds() {
        List<ForwardingClass.Forward> fromFile = PgConnectionSubclass.fromClassFile(PGConnection.class);
        assertNotNull(fromFile, "pgjdbc's PGConnection extends no interface: its class file is read");
        Set<String> file = keys(fromFile);
        Set<String> reflection = keys(PgConnectionSubclass.fromReflection(PGConnection.class));
        assertFalse(file.isEmpty());
        assertEquals(reflection, file);
        assertTrue(file.stream().anyMatch(k -> k.startsWith("getBackendPID()I")), file.toString());
        assertFalse(file.stream().anyMatch(k -> k.startsWith("createStatement(")), "a java.sql.Connection method");
    }

    /** The class written from that list implements every PGConnection method. */
    @Test
    void theSubclassLeavesNoPgConnectionMethodAbstract() throws Exception {
        Class<?> made = PgConnectionSubclass.subclassFor(PGConnection.class);
        assertTrue(PGConnection.class.isAssignableFrom(made));
        for (Method m : PGConnection.class.getMethods()) {
            Method implemented = made.getMethod(m.getName(), m.getParameterTypes());
            assertFalse(Modifier.isAbstract(implemented.getModifiers()), m.toString());
        }
    }

    private static Set<String> keys(List<ForwardingClass.Forward> forwards) {
        Set<String> keys = new TreeSet<>();
        for (ForwardingClass.Forward f : forwards) {
            keys.add(f.name + f.descriptor + " " + f.owner + " " + f.exceptions);
        }
        return keys;
    }
}
