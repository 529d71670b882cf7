package io.lockhygiene.agent;

import java.io.ByteArrayOutputStream;

/**
 * The edit premain makes to a class as it first loads, without ASM: one method is renamed to a private
 * synthetic {@code lockhygiene$NAME} and a method under the old name, flags and descriptor calls it and
 * our hook, in straight-line code. The original code stays byte for byte as compiled (offsets, frames,
 * line numbers), so nothing in it is rewritten; the price is one more frame in stack traces
 * ({@code lockhygiene$connect} under {@code connect}). Adding a method is allowed only while a class is
 * first defined: a class already loaded (attach) is edited by {@link InsertHooks} with ASM, and a class
 * edited here is edited here again when redefined, so its shape never changes.
 */
final class MethodWrap {
    /** {@code connect(url, info)}: returns {@code HOOKS.hook(this.lockhygiene$connect(url, info), this, url, info)}. */
    static final int RESULT_THROUGH_HOOK = 1;
    /** {@code close()}: calls {@code HOOKS.hook(this)}, then {@code this.lockhygiene$close()}. */
    static final int HOOK_FIRST = 2;

    static final String PREFIX = "lockhygiene$";
    private static final int ACC_PUBLIC = 0x0001;
    private static final int ACC_PRIVATE = 0x0002;
    private static final int ACC_PROTECTED = 0x0004;
    private static final int ACC_SYNTHETIC = 0x1000;

    private MethodWrap() {
    }

    /**
     * @param shape {@link #RESULT_THROUGH_HOOK} (descriptor {@code (Ljava/lang/String;Ljava/util/Properties;)L...;},
     *              hook {@code (Lreturn;Lthis-type;Ljava/lang/String;Ljava/util/Properties;)Lreturn;}) or
     *              {@link #HOOK_FIRST} (descriptor {@code ()V}, hook {@code (Lthis-type;)V})
     * @return the edited class, or null when it has no such concrete instance method (nothing to do)
     * @throws IllegalArgumentException when the bytes are not a class file this understands
     */
    static byte[] wrap(byte[] classFile, String name, String descriptor, int shape, String hookOwner, String hook,
                       String hookDescriptor) {
        ClassFile in = new ClassFile(classFile);
        ClassFile.MethodInfo target = in.concreteMethod(name, descriptor);
        if (target == null || in.hasMethodNamed(PREFIX + name)) {
            return null; // nothing to edit, or edited already (a second copy of this agent, or bytes handed on)
        }
        byte[] bytes = in.bytes;
        ConstantPoolTail pool = new ConstantPoolTail(in.poolCount);
        int renamed = pool.utf8(PREFIX + name);
        int original = pool.methodRef(in.thisClass, PREFIX + name, descriptor);
        int hookRef = pool.methodRef(pool.classRef(hookOwner), hook, hookDescriptor);
        int code = pool.utf8("Code");
        byte[] added = pool.toByteArray();

        ByteArrayOutputStream out = new ByteArrayOutputStream(bytes.length + added.length + 64);
        out.write(bytes, 0, 8);
        ClassFile.u2(out, pool.count());
        out.write(bytes, 10, in.poolEnd - 10);
        out.write(added, 0, added.length);
        out.write(bytes, in.poolEnd, in.methodsCountAt - in.poolEnd);
        ClassFile.u2(out, in.methods.size() + 1);
        // the original method, renamed and private: only the new one calls it
        out.write(bytes, in.methodsCountAt + 2, target.start - in.methodsCountAt - 2);
        ClassFile.u2(out, (target.access & ~(ACC_PUBLIC | ACC_PROTECTED)) | ACC_PRIVATE | ACC_SYNTHETIC);
        ClassFile.u2(out, renamed);
        out.write(bytes, target.start + 4, in.methodsEnd - target.start - 4);
        // the new method under the old name, flags (synchronized included) and descriptor
        ClassFile.u2(out, target.access);
        ClassFile.u2(out, target.nameIndex);
        ClassFile.u2(out, target.descriptorIndex);
        ClassFile.u2(out, target.exceptionsStart < 0 ? 1 : 2);
        byte[] body = shape == RESULT_THROUGH_HOOK ? resultThroughHook(original, hookRef) : hookFirst(original, hookRef);
        int maxStack = shape == RESULT_THROUGH_HOOK ? 4 : 1;
        int maxLocals = shape == RESULT_THROUGH_HOOK ? 3 : 1;
        ClassFile.code(out, code, maxStack, maxLocals, body);
        if (target.exceptionsStart >= 0) {
            // its indices point into the unchanged part of the pool
            out.write(bytes, target.exceptionsStart, target.exceptionsEnd - target.exceptionsStart);
        }
        out.write(bytes, in.methodsEnd, bytes.length - in.methodsEnd); // class attributes
        return out.toByteArray();
    }

    /** aload_0 aload_1 aload_2 invokespecial original; aload_0 aload_1 aload_2 invokestatic hook; areturn */
    private static byte[] resultThroughHook(int original, int hook) {
        return new byte[] {0x2a, 0x2b, 0x2c, (byte) 0xb7, hi(original), lo(original),
                0x2a, 0x2b, 0x2c, (byte) 0xb8, hi(hook), lo(hook), (byte) 0xb0};
    }

    /** aload_0 invokestatic hook; aload_0 invokespecial original; return */
    private static byte[] hookFirst(int original, int hook) {
        return new byte[] {0x2a, (byte) 0xb8, hi(hook), lo(hook), 0x2a, (byte) 0xb7, hi(original), lo(original), (byte) 0xb1};
    }

    private static byte hi(int v) {
        return (byte) (v >>> 8);
    }

    private static byte lo(int v) {
        return (byte) v;
    }
}
