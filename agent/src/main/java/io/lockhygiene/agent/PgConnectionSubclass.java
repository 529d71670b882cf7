package io.lockhygiene.agent;

import static net.bytebuddy.matcher.ElementMatchers.isAbstract;
import static net.bytebuddy.matcher.ElementMatchers.named;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.util.concurrent.ConcurrentHashMap;

import io.lockhygiene.jdbc.HolderFactory;
import io.lockhygiene.jdbc.LockHygieneConnection;
import io.lockhygiene.settings.Settings;
import net.bytebuddy.ByteBuddy;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.dynamic.loading.ClassLoadingStrategy;
import net.bytebuddy.dynamic.scaffold.subclass.ConstructorStrategy;
import net.bytebuddy.implementation.MethodCall;
import net.bytebuddy.implementation.bytecode.assign.Assigner;

/**
 * The agent's guarded connection also implements pgjdbc's {@code PGConnection}, so service code that
 * casts ({@code (PGConnection) conn}) keeps working. The subclass is made once per pgjdbc class loader, in
 * a class loader below it (which sees pgjdbc and, through its parents, LockHygiene); every
 * {@code PGConnection} method forwards to the pgjdbc connection underneath.
 */
final class PgConnectionSubclass {
    private static final ConcurrentHashMap<Class<?>, Constructor<?>> BY_INTERFACE = new ConcurrentHashMap<>();

    private PgConnectionSubclass() {
    }

    /** A guarded connection that is also a PGConnection, or null when that cannot be made here. */
    static Connection wrap(Connection pg, Settings settings, HolderFactory holders) {
        Class<?> pgInterface = pgConnectionInterface(pg);
        if (pgInterface == null) {
            return null;
        }
        try {
            Constructor<?> ctor = BY_INTERFACE.computeIfAbsent(pgInterface, PgConnectionSubclass::make);
            return (Connection) ctor.newInstance(pg, settings, holders);
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return null;
        }
    }

    private static Class<?> pgConnectionInterface(Connection pg) {
        for (Class<?> c = pg.getClass(); c != null; c = c.getSuperclass()) {
            for (Class<?> i : c.getInterfaces()) {
                if (i.getName().equals("org.postgresql.PGConnection")) {
                    return i;
                }
                for (Class<?> j : i.getInterfaces()) {
                    if (j.getName().equals("org.postgresql.PGConnection")) {
                        return j;
                    }
                }
            }
        }
        return null;
    }

    private static Constructor<?> make(Class<?> pgInterface) {
        try {
            Method pgDelegate = LockHygieneConnection.class.getMethod("pgDelegate");
            Class<?> type = new ByteBuddy()
                    .subclass(LockHygieneConnection.class, ConstructorStrategy.Default.IMITATE_SUPER_CLASS_OPENING)
                    .name(pgInterface.getName().replace("PGConnection", "LockHygienePGConnection")
                            .replace("org.postgresql.", "io.lockhygiene.agent.generated."))
                    .implement(pgInterface)
                    .method(isAbstract().and(m -> isOf(m, pgInterface)))
                    .intercept(MethodCall.invokeSelf().onMethodCall(MethodCall.invoke(pgDelegate))
                            .withAllArguments().withAssigner(Assigner.DEFAULT, Assigner.Typing.DYNAMIC))
                    .make()
                    .load(new Bridge(pgInterface.getClassLoader()), ClassLoadingStrategy.Default.WRAPPER)
                    .getLoaded();
            return type.getConstructor(Connection.class, Settings.class, HolderFactory.class);
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(e);
        }
    }

    private static boolean isOf(MethodDescription m, Class<?> pgInterface) {
        return m.getDeclaringType().asErasure().isAssignableFrom(pgInterface)
                && !m.getDeclaringType().asErasure().represents(Object.class);
    }

    /** Sees pgjdbc (its own loader) first, then LockHygiene's loader for our classes. */
    private static final class Bridge extends ClassLoader {
        private final ClassLoader ours = LockHygieneConnection.class.getClassLoader();

        Bridge(ClassLoader pgjdbc) {
            super(pgjdbc);
        }

        @Override
        protected Class<?> findClass(String name) throws ClassNotFoundException {
            return Class.forName(name, false, ours);
        }
    }
}
