package io.lockhygiene.agent;

import java.io.ByteArrayOutputStream;

/**
 * The edit premain makes to a class as it first loads, without ASM: one method is renamed to a private
 * synthetic {@code lockhygiene$NAME} and a method under the old name, flags and descriptor calls it and
 * our hook, in straight-line code. The original code stays byte for byte as compiled (offsets, frames,
 * line numbers), so nothing in it is rewritten; the price is one more frame in stack traces
 * ({@code lockhygiene$connect} under {@code connect}). Adding a method is allowed only while a class is
 * first defined: a class already loaded (attach) is edited by {@link PgjdbcTransformer}'s ASM path, and a
 * class edited here is edited here again when retransformed, so its shape never changes.
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
    private static final int ACC_STATIC = 0x0008;
    private static final int ACC_SYNTHETIC = 0x1000;
    private static final int ACC_ABSTRACT_OR_NATIVE = 0x0400 | 0x0100;

    private final byte[] in;
    private int pos;

    private MethodWrap(byte[] in) {
        this.in = in;
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
        try {
            return new MethodWrap(classFile).edit(name, descriptor, shape, hookOwner, hook, hookDescriptor);
        } catch (IndexOutOfBoundsException truncated) {
            throw new IllegalArgumentException("not a complete class file", truncated);
        }
    }

    private byte[] edit(String name, String descriptor, int shape, String hookOwner, String hook, String hookDescriptor) {
        if (u4() != 0xCAFEBABE) {
            throw new IllegalArgumentException("not a class file");
        }
        pos += 4; // minor, major
        int poolCount = u2();
        int[] utf8At = new int[poolCount]; // offset of each Utf8 entry's length, 0 for other entries
        for (int i = 1; i < poolCount; i++) {
            int tag = in[pos++] & 0xFF;
            switch (tag) {
                case 1: // Utf8
                    utf8At[i] = pos;
                    pos += 2 + u2At(pos);
                    break;
                case 3: case 4: case 9: case 10: case 11: case 12: case 17: case 18:
                    pos += 4;
                    break;
                case 5: case 6: // Long, Double: two slots
                    pos += 8;
                    i++;
                    break;
                case 7: case 8: case 16: case 19: case 20:
                    pos += 2;
                    break;
                case 15:
                    pos += 3;
                    break;
                default:
                    throw new IllegalArgumentException("constant pool tag " + tag);
            }
        }
        int poolEnd = pos;
        pos += 2; // access
        int thisClass = u2();
        pos += 2; // super
        int interfaces = u2();
        pos += 2 * interfaces; // (not "pos += 2 * u2()": Java reads pos before u2() moves it)
        skipMembers(); // fields
        int methodsCountAt = pos;
        int methods = u2();
        int target = -1;
        int targetAccess = 0;
        int targetName = 0;
        int targetDescriptor = 0;
        byte[] exceptions = null;
        for (int m = 0; m < methods; m++) {
            int start = pos;
            int access = u2();
            int nameIndex = u2();
            int descriptorIndex = u2();
            boolean match = (access & (ACC_STATIC | ACC_ABSTRACT_OR_NATIVE)) == 0
                    && utf8Equals(utf8At, nameIndex, name) && utf8Equals(utf8At, descriptorIndex, descriptor);
            if (utf8Equals(utf8At, nameIndex, PREFIX + name)) {
                return null; // edited already (a second copy of this agent, or bytes handed on by another agent)
            }
            int attributes = u2();
            for (int a = 0; a < attributes; a++) {
                int attrStart = pos;
                int attrName = u2();
                int length = u4();
                pos += length;
                if (match && utf8Equals(utf8At, attrName, "Exceptions")) {
                    exceptions = java.util.Arrays.copyOfRange(in, attrStart, pos);
                }
            }
            if (match) {
                target = start;
                targetAccess = access;
                targetName = nameIndex;
                targetDescriptor = descriptorIndex;
            }
        }
        if (target < 0) {
            return null;
        }
        int methodsEnd = pos;

        ConstantPoolTail pool = new ConstantPoolTail(poolCount);
        int renamed = pool.utf8(PREFIX + name);
        int original = pool.methodRef(thisClass, PREFIX + name, descriptor);
        int hookRef = pool.methodRef(pool.classRef(hookOwner), hook, hookDescriptor);
        int code = pool.utf8("Code");
        byte[] added = pool.toByteArray();

        ByteArrayOutputStream out = new ByteArrayOutputStream(in.length + added.length + 64);
        out.write(in, 0, 8);
        u2(out, pool.count());
        out.write(in, 10, poolEnd - 10);
        out.write(added, 0, added.length);
        out.write(in, poolEnd, methodsCountAt - poolEnd);
        u2(out, methods + 1);
        // the original method, renamed and private: only the new one calls it
        out.write(in, methodsCountAt + 2, target - methodsCountAt - 2);
        u2(out, (targetAccess & ~(ACC_PUBLIC | ACC_PROTECTED)) | ACC_PRIVATE | ACC_SYNTHETIC);
        u2(out, renamed);
        out.write(in, target + 4, methodsEnd - target - 4);
        // the new method under the old name, flags (synchronized included) and descriptor
        u2(out, targetAccess);
        u2(out, targetName);
        u2(out, targetDescriptor);
        u2(out, exceptions == null ? 1 : 2);
        byte[] body = shape == RESULT_THROUGH_HOOK ? resultThroughHook(original, hookRef) : hookFirst(original, hookRef);
        int maxStack = shape == RESULT_THROUGH_HOOK ? 4 : 1;
        int maxLocals = shape == RESULT_THROUGH_HOOK ? 3 : 1;
        u2(out, code);
        u4(out, 2 + 2 + 4 + body.length + 2 + 2);
        u2(out, maxStack);
        u2(out, maxLocals);
        u4(out, body.length);
        out.write(body, 0, body.length);
        u2(out, 0); // exception table
        u2(out, 0); // attributes
        if (exceptions != null) {
            out.write(exceptions, 0, exceptions.length); // its indices point into the unchanged part of the pool
        }
        out.write(in, methodsEnd, in.length - methodsEnd); // class attributes
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

    private void skipMembers() {
        int count = u2();
        for (int i = 0; i < count; i++) {
            pos += 6;
            int attributes = u2();
            for (int a = 0; a < attributes; a++) {
                pos += 2;
                int length = u4();
                pos += length;
            }
        }
    }

    private boolean utf8Equals(int[] utf8At, int index, String ascii) {
        if (index <= 0 || index >= utf8At.length || utf8At[index] == 0) {
            return false;
        }
        int at = utf8At[index];
        int length = u2At(at);
        if (length != ascii.length()) {
            return false;
        }
        for (int i = 0; i < length; i++) {
            if (in[at + 2 + i] != (byte) ascii.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private int u2At(int at) {
        return (in[at] & 0xFF) << 8 | (in[at + 1] & 0xFF);
    }

    private int u2() {
        int v = u2At(pos);
        pos += 2;
        return v;
    }

    private int u4() {
        int v = u2At(pos) << 16 | u2At(pos + 2);
        pos += 4;
        return v;
    }

    private static byte hi(int v) {
        return (byte) (v >>> 8);
    }

    private static byte lo(int v) {
        return (byte) v;
    }

    static void u2(ByteArrayOutputStream out, int v) {
        out.write(v >>> 8);
        out.write(v);
    }

    static void u4(ByteArrayOutputStream out, int v) {
        u2(out, v >>> 16);
        u2(out, v);
    }
}
