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
import io.lockhygiene.internal.holder.HolderRoute;
import io.lockhygiene.internal.jdbc.LockHygieneConnection;
import io.lockhygiene.settings.Settings;

/**
 * The agent's guarded connection also implements pgjdbc's {@code PGConnection}, so service code that
 * casts ({@code (PGConnection) conn}) keeps working. The subclass is written once per pgjdbc class loader
 * (against the PGConnection the service actually has) into a class loader below pgjdbc's, which sees
 * pgjdbc and, through its parents, LockHygiene; each PGConnection method forwards to the pgjdbc
 * connection underneath.
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
        List<ForwardingClass.Forward> forwards = fromClassFile(pgInterface);
        if (forwards == null) {
            forwards = fromReflection(pgInterface);
        }
        byte[] bytes = ForwardingClass.write(NAME, ForwardingClass.internalName(GeneratedConnection.class), CTOR,
                "pgDelegate", ForwardingClass.internalName(pgInterface), forwards);
        try {
            Class<?> type = new Bridge(pgInterface.getClassLoader()).define(NAME.replace('/', '.'), bytes);
            return type.getConstructor(CTOR);
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * PGConnection's abstract methods read from its class file, less those java.sql.Connection declares
     * (GeneratedConnection implements them): reflection would load every type the ~30 signatures name (the
     * copy and large-object APIs, replication, ...), a first connection's largest cost after the core's
     * own classes. Null when the class file cannot be read or the interface extends another (then
     * reflection, which sees inherited methods).
     */
    static List<ForwardingClass.Forward> fromClassFile(Class<?> pgInterface) {
        ClassFile pg = read(pgInterface);
        if (pg == null || !pg.interfaces.isEmpty()) {
            return null;
        }
        Set<String> implemented = connectionMethods();
        if (implemented == null) {
            return null;
        }
        List<ForwardingClass.Forward> forwards = new ArrayList<>();
        for (ClassFile.MethodInfo m : pg.methods) {
            if ((m.access & ClassFile.ACC_ABSTRACT) != 0 && (m.access & ClassFile.ACC_STATIC) == 0
                    && !implemented.contains(m.name + m.descriptor)) {
                forwards.add(new ForwardingClass.Forward(m.name, m.descriptor, pg.name, m.exceptions));
            }
        }
        return forwards;
    }

    /** The same list through reflection (inherited methods included). */
    static List<ForwardingClass.Forward> fromReflection(Class<?> pgInterface) {
        List<ForwardingClass.Forward> forwards = new ArrayList<>();
        for (Method m : pgInterface.getMethods()) {
            if (Modifier.isAbstract(m.getModifiers()) && !alreadyImplemented(m)) {
                forwards.add(ForwardingClass.Forward.of(m));
            }
        }
        return forwards;
    }

    /** java.sql.Connection methods PGConnection may redeclare are implemented by GeneratedConnection already. */
    private static boolean alreadyImplemented(Method m) {
        try {
            Method ours = GeneratedConnection.class.getMethod(m.getName(), m.getParameterTypes());
            return !Modifier.isAbstract(ours.getModifiers());
        } catch (NoSuchMethodException e) {
            return false;
        }
    }

    /** Name and descriptor of every method of java.sql.Connection and the interfaces it extends. */
    private static Set<String> connectionMethods() {
        Set<String> found = new HashSet<>();
        for (Class<?> c : new Class<?>[] {Connection.class, java.sql.Wrapper.class, AutoCloseable.class}) {
            ClassFile cf = read(c);
            if (cf == null) {
                return null;
            }
            for (ClassFile.MethodInfo m : cf.methods) {
                found.add(m.name + m.descriptor);
            }
        }
        return found;
    }

    private static ClassFile read(Class<?> c) {
        String resource = c.getName().substring(c.getName().lastIndexOf('.') + 1) + ".class";
        try (java.io.InputStream in = c.getResourceAsStream(resource)) {
            return in == null ? null : new ClassFile(in.readAllBytes());
        } catch (java.io.IOException | IllegalArgumentException | SecurityException e) {
            return null;
        }
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
