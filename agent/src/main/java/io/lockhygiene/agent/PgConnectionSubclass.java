package io.lockhygiene.agent;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;

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
        byte[] bytes = PregeneratedSubclass.lookUp(pgInterface); // this pgjdbc's PGConnection seen at build time
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
     * PGConnection's abstract methods (inherited ones included), less those GeneratedConnection implements
     * (java.sql.Connection's). Reading them from PGConnection's class file instead was tried: no faster at a
     * first connection (reading the resource costs what reflection's type loading does), so reflection.
     */
    static List<Method> forwards(Class<?> pgInterface) {
        List<Method> forwards = new ArrayList<>();
        for (Method m : pgInterface.getMethods()) {
            if (Modifier.isAbstract(m.getModifiers()) && !alreadyImplemented(m)) {
                forwards.add(m);
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
