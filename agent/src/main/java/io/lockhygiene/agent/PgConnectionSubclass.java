package io.lockhygiene.agent;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.lockhygiene.internal.jdbc.GeneratedConnection;
import io.lockhygiene.internal.placement.HolderRoute;
import io.lockhygiene.internal.jdbc.LockHygieneConnection;
import io.lockhygiene.settings.Settings;

/**
 * The agent's guarded connection also implements pgjdbc's {@code PGConnection}, so service code that
 * casts ({@code (PGConnection) conn}) keeps working. The subclass is defined once per pgjdbc class loader
 * (against the PGConnection the service actually has) into a class loader below pgjdbc's, which sees
 * pgjdbc and, through its parents, LockHygiene; each PGConnection method forwards to the pgjdbc
 * connection underneath. Its class file comes from the build when the service's PGConnection class file is
 * the one the build saw ({@link Pregenerated}), else it is written here.
 */
final class PgConnectionSubclass {
    private static final String NAME = "io/lockhygiene/agent/generated/LockHygienePGConnection";
    private static final Class<?>[] CTOR = {Connection.class, Settings.class, HolderRoute.class};
    /**
     * The generated subclass's constructor per PGConnection interface, kept with that interface (a
     * ClassValue): an application server's undeployed application takes its pgjdbc, and our subclass of
     * it, with it, instead of a static map holding its class loader forever.
     */
    private static final ClassValue<Constructor<?>> BY_INTERFACE = new ClassValue<Constructor<?>>() {
        @Override
        protected Constructor<?> computeValue(Class<?> pgInterface) {
            return define(pgInterface);
        }
    };

    private PgConnectionSubclass() {
    }

    /**
     * A guarded connection that is also a PGConnection, or null when that cannot be made here.
     *
     * @throws java.sql.SQLException when the settings cannot work (lockhygiene.holderUrl); {@code pg} stays open
     */
    static Connection wrap(Connection pg, Settings settings, HolderRoute holders) throws java.sql.SQLException {
        Class<?> pgInterface = pgConnectionInterface(pg.getClass());
        if (pgInterface == null) {
            return null;
        }
        try {
            Constructor<?> ctor = BY_INTERFACE.get(pgInterface);
            return (Connection) ctor.newInstance(pg, settings, holders);
        } catch (java.lang.reflect.InvocationTargetException e) {
            if (e.getCause() instanceof java.sql.SQLException) {
                throw (java.sql.SQLException) e.getCause();
            }
            return null;
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return null;
        }
    }

    /** The subclass for this PGConnection interface (made once). */
    static Class<?> subclassFor(Class<?> pgInterface) {
        return BY_INTERFACE.get(pgInterface).getDeclaringClass();
    }

    static Class<?> pgConnectionInterface(Class<?> type) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            for (Class<?> i : c.getInterfaces()) {
                Class<?> found = find(i);
                if (found != null) {
                    return found;
                }
            }
        }
        return null;
    }

    private static Class<?> find(Class<?> iface) {
        if (iface.getName().equals("org.postgresql.PGConnection")) {
            return iface;
        }
        for (Class<?> parent : iface.getInterfaces()) {
            Class<?> found = find(parent);
            if (found != null) {
                return found;
            }
        }
        return null;
    }

    private static Constructor<?> define(Class<?> pgInterface) {
        byte[] bytes = Pregenerated.subclass(pgInterface); // this pgjdbc's PGConnection seen at build time
        if (bytes == null) {
            bytes = write(pgInterface, forwards(pgInterface));
        }
        try {
            Class<?> type = new Bridge(pgInterface.getClassLoader()).define(NAME.replace('/', '.'), bytes);
            return type.getConstructor(CTOR);
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(e);
        }
    }

    static byte[] write(Class<?> pgInterface, List<Method> forwards) {
        return ForwardingClass.write(NAME, ForwardingClass.internalName(GeneratedConnection.class), CTOR, "pgDelegate",
                pgInterface, forwards);
    }

    /**
     * PGConnection's abstract methods (inherited ones included), less those every subclass of
     * GeneratedConnection has already: java.sql.Connection's (GeneratedConnection forwards each to the
     * guard) and Object's. Decided by signature from those two interfaces' method lists rather than by asking
     * GeneratedConnection for each method: its public method table resolves every JDBC type it names, and
     * each miss costs an exception (together some 10 ms of a cold first connection). Reading PGConnection's
     * class file instead of reflection was tried: no faster (reading the resource costs what the type
     * loading does).
     */
    static List<Method> forwards(Class<?> pgInterface) {
        Set<String> implemented = new HashSet<>();
        for (Class<?> c : new Class<?>[] {Connection.class, Object.class}) {
            for (Method m : c.getMethods()) {
                implemented.add(signature(m));
            }
        }
        List<Method> forwards = new ArrayList<>();
        for (Method m : pgInterface.getMethods()) {
            if (Modifier.isAbstract(m.getModifiers()) && !implemented.contains(signature(m))) {
                forwards.add(m);
            }
        }
        return forwards;
    }

    /** Name and parameter types: what makes one method implement another. */
    private static String signature(Method m) {
        return m.getName() + ForwardingClass.descriptor(m.getParameterTypes(), void.class);
    }

    /** Below pgjdbc's loader; our own classes come from LockHygiene's loader when pgjdbc's cannot see them. */
    private static final class Bridge extends ClassLoader {
        private final ClassLoader ours = LockHygieneConnection.class.getClassLoader();

        Bridge(ClassLoader pgjdbc) {
            super(pgjdbc);
        }

        Class<?> define(String name, byte[] bytes) {
            return defineClass(name, bytes, 0, bytes.length);
        }

        @Override
        protected Class<?> findClass(String name) throws ClassNotFoundException {
            return Class.forName(name, false, ours);
        }
    }
}
