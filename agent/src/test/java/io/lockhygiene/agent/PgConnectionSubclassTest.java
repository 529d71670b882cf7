package io.lockhygiene.agent;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;

import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PgConnectionSubclassTest {

    /** The subclass implements every PGConnection method (forwarded, or GeneratedConnection's own). */
    @Test
    void theSubclassLeavesNoPgConnectionMethodAbstract() throws Exception {
        Class<?> made = PgConnectionSubclass.subclassFor(PGConnection.class);
        assertTrue(PGConnection.class.isAssignableFrom(made));
        for (Method m : PGConnection.class.getMethods()) {
            Method implemented = made.getMethod(m.getName(), m.getParameterTypes());
            assertFalse(Modifier.isAbstract(implemented.getModifiers()), m.toString());
        }
    }
}
