package io.lockhygiene.agent;

import java.lang.instrument.ClassFileTransformer;
import java.security.ProtectionDomain;
import java.util.concurrent.atomic.AtomicBoolean;

import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;

/**
 * Three narrow edits, made with the ASM that ByteBuddy carries (the AgentBuilder itself loads some 900
 * classes at start-up, over half a second; this loads a few dozen, and only when a target class loads):
 * <ul>
 *   <li>{@code org.postgresql.Driver.connect(String, Properties)}: every returned connection goes through
 *       {@link AgentHooks#onConnect} (DriverManager, PGSimpleDataSource and every pool that opens
 *       connections through them);</li>
 *   <li>{@code close()} of HikariCP's {@code ProxyConnection} and Commons DBCP2's
 *       {@code PoolableConnection}: {@link AgentHooks#onPoolReturn} first (the return event).</li>
 * </ul>
 * Every other class is one string comparison. A class loader that cannot see our hooks is left alone.
 */
final class PgjdbcTransformer implements ClassFileTransformer {
    static final String DRIVER = "org/postgresql/Driver";
    static final String HIKARI = "com/zaxxer/hikari/pool/ProxyConnection";
    static final String DBCP2 = "org/apache/commons/dbcp2/PoolableConnection";
    private static final String HOOKS = "io/lockhygiene/agent/AgentHooks";
    private static final String CONNECT_DESC = "(Ljava/lang/String;Ljava/util/Properties;)Ljava/sql/Connection;";
    private final AtomicBoolean reported = new AtomicBoolean();

    static boolean isTarget(String internalName) {
        return DRIVER.equals(internalName) || HIKARI.equals(internalName) || DBCP2.equals(internalName);
    }

    @Override
    public byte[] transform(ClassLoader loader, String className, Class<?> redefined, ProtectionDomain domain,
                            byte[] bytes) {
        if (className == null || !isTarget(className)) {
            return null;
        }
        try {
            if (!seesOurHooks(loader)) {
                report(className, "its class loader cannot see io.lockhygiene.agent.AgentHooks");
                return null;
            }
            ClassReader reader = new ClassReader(bytes);
            ClassWriter writer = new ClassWriter(reader, ClassWriter.COMPUTE_MAXS);
            boolean driver = DRIVER.equals(className);
            reader.accept(new ClassVisitor(Opcodes.ASM9, writer) {
                @Override
                public MethodVisitor visitMethod(int access, String name, String desc, String signature, String[] exceptions) {
                    MethodVisitor mv = super.visitMethod(access, name, desc, signature, exceptions);
                    if ((access & Opcodes.ACC_ABSTRACT) != 0) {
                        return mv;
                    }
                    if (driver && "connect".equals(name) && CONNECT_DESC.equals(desc)) {
                        return new ConnectExit(mv);
                    }
                    if (!driver && "close".equals(name) && "()V".equals(desc)) {
                        return new CloseEntry(mv);
                    }
                    return mv;
                }
            }, 0);
            return writer.toByteArray();
        } catch (RuntimeException | LinkageError e) {
            report(className, e.toString());
            return null;
        }
    }

    private static boolean seesOurHooks(ClassLoader loader) {
        try {
            return Class.forName(AgentHooks.class.getName(), false, loader) == AgentHooks.class;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    private void report(String className, String why) {
        if (reported.compareAndSet(false, true)) {
            System.err.println("[lockhygiene agent] could not instrument " + className.replace('/', '.')
                    + "; the service runs unprotected there: " + why);
        }
    }

    /** Before each ARETURN: connection = AgentHooks.onConnect(connection, this, url, info). */
    private static final class ConnectExit extends MethodVisitor {
        ConnectExit(MethodVisitor mv) {
            super(Opcodes.ASM9, mv);
        }

        @Override
        public void visitInsn(int opcode) {
            if (opcode == Opcodes.ARETURN) {
                super.visitVarInsn(Opcodes.ALOAD, 0);
                super.visitVarInsn(Opcodes.ALOAD, 1);
                super.visitVarInsn(Opcodes.ALOAD, 2);
                super.visitMethodInsn(Opcodes.INVOKESTATIC, HOOKS, "onConnect",
                        "(Ljava/sql/Connection;Ljava/sql/Driver;Ljava/lang/String;Ljava/util/Properties;)Ljava/sql/Connection;",
                        false);
            }
            super.visitInsn(opcode);
        }
    }

    /** First thing in close(): AgentHooks.onPoolReturn(this). */
    private static final class CloseEntry extends MethodVisitor {
        CloseEntry(MethodVisitor mv) {
            super(Opcodes.ASM9, mv);
        }

        @Override
        public void visitCode() {
            super.visitCode();
            super.visitVarInsn(Opcodes.ALOAD, 0);
            super.visitMethodInsn(Opcodes.INVOKESTATIC, HOOKS, "onPoolReturn", "(Ljava/sql/Connection;)V", false);
        }
    }
}
