package io.lockhygiene.agent;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.sql.Connection;

import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import net.bytebuddy.jar.asm.Type;

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
    private static final String SUPER = Type.getInternalName(GeneratedConnection.class);
    private static final String CTOR = Type.getConstructorDescriptor(constructorOfSuper());
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

    private static Constructor<?> constructorOfSuper() {
        try {
            return GeneratedConnection.class.getDeclaredConstructor(Connection.class, Settings.class, HolderRoute.class);
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(e);
        }
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
        ClassWriter cw = new ClassWriter(ClassWriter.COMPUTE_MAXS);
        cw.visit(Opcodes.V11, Opcodes.ACC_PUBLIC | Opcodes.ACC_FINAL | Opcodes.ACC_SUPER, NAME, null, SUPER,
                new String[] {Type.getInternalName(pgInterface)});
        MethodVisitor init = cw.visitMethod(Opcodes.ACC_PUBLIC, "<init>", CTOR, null, null);
        init.visitCode();
        for (int slot = 0; slot <= 3; slot++) {
            init.visitVarInsn(Opcodes.ALOAD, slot);
        }
        init.visitMethodInsn(Opcodes.INVOKESPECIAL, SUPER, "<init>", CTOR, false);
        init.visitInsn(Opcodes.RETURN);
        init.visitMaxs(0, 0);
        init.visitEnd();
        for (Method m : pgInterface.getMethods()) {
            if (!Modifier.isAbstract(m.getModifiers()) || alreadyImplemented(m)) {
                continue;
            }
            forward(cw, m);
        }
        cw.visitEnd();
        try {
            Class<?> type = new Bridge(pgInterface.getClassLoader()).define(NAME.replace('/', '.'), cw.toByteArray());
            return type.getConstructor(Connection.class, Settings.class, HolderRoute.class);
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(e);
        }
    }

    /** java.sql.Connection methods PGConnection may redeclare are implemented by GeneratedConnection (LockHygieneConnection and its generated leaf) already. */
    private static boolean alreadyImplemented(Method m) {
        try {
            Method ours = GeneratedConnection.class.getMethod(m.getName(), m.getParameterTypes());
            return !Modifier.isAbstract(ours.getModifiers());
        } catch (NoSuchMethodException e) {
            return false;
        }
    }

    /** {@code return ((PGConnection) pgDelegate()).m(args);} */
    private static void forward(ClassWriter cw, Method m) {
        String desc = Type.getMethodDescriptor(m);
        String[] exceptions = new String[m.getExceptionTypes().length];
        for (int i = 0; i < exceptions.length; i++) {
            exceptions[i] = Type.getInternalName(m.getExceptionTypes()[i]);
        }
        MethodVisitor mv = cw.visitMethod(Opcodes.ACC_PUBLIC, m.getName(), desc, null, exceptions);
        mv.visitCode();
        mv.visitVarInsn(Opcodes.ALOAD, 0);
        mv.visitMethodInsn(Opcodes.INVOKEVIRTUAL, SUPER, "pgDelegate", "()Ljava/sql/Connection;", false);
        String owner = Type.getInternalName(m.getDeclaringClass());
        mv.visitTypeInsn(Opcodes.CHECKCAST, owner);
        int slot = 1;
        for (Type arg : Type.getArgumentTypes(desc)) {
            mv.visitVarInsn(arg.getOpcode(Opcodes.ILOAD), slot);
            slot += arg.getSize();
        }
        mv.visitMethodInsn(Opcodes.INVOKEINTERFACE, owner, m.getName(), desc, true);
        mv.visitInsn(Type.getReturnType(desc).getOpcode(Opcodes.IRETURN));
        mv.visitMaxs(0, 0);
        mv.visitEnd();
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
