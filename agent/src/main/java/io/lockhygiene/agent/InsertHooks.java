package io.lockhygiene.agent;

import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;

/**
 * The attach-time edit, with ASM: a class already loaded may change its methods' code but not its
 * methods, so the hook calls go inside {@code connect} (before each return) and {@code close} (first).
 * Only this class refers to ASM, so a service started with -javaagent never loads it.
 */
final class InsertHooks {
    private InsertHooks() {
    }

    static byte[] edit(byte[] bytes, boolean driver) {
        ClassReader reader = new ClassReader(bytes);
        ClassWriter writer = new ClassWriter(reader, ClassWriter.COMPUTE_MAXS);
        reader.accept(new ClassVisitor(Opcodes.ASM9, writer) {
            @Override
            public MethodVisitor visitMethod(int access, String name, String desc, String signature, String[] exceptions) {
                MethodVisitor mv = super.visitMethod(access, name, desc, signature, exceptions);
                if ((access & (Opcodes.ACC_ABSTRACT | Opcodes.ACC_STATIC)) != 0) {
                    return mv;
                }
                if (driver && "connect".equals(name) && PgjdbcTransformer.CONNECT_DESC.equals(desc)) {
                    return new ConnectExit(mv);
                }
                if (!driver && "close".equals(name) && "()V".equals(desc)) {
                    return new CloseEntry(mv);
                }
                return mv;
            }
        }, 0);
        return writer.toByteArray();
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
                super.visitMethodInsn(Opcodes.INVOKESTATIC, PgjdbcTransformer.HOOKS, PgjdbcTransformer.ON_CONNECT,
                        PgjdbcTransformer.ON_CONNECT_DESC, false);
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
            super.visitMethodInsn(Opcodes.INVOKESTATIC, PgjdbcTransformer.HOOKS, PgjdbcTransformer.ON_POOL_RETURN,
                    PgjdbcTransformer.ON_POOL_RETURN_DESC, false);
        }
    }
}
