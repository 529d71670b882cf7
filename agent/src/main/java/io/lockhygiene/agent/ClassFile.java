package io.lockhygiene.agent;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A class file read as far as {@link MethodWrap} needs to edit it as it loads: the constant pool's layout
 * and the methods (flags, name, descriptor, where each lies and where its Exceptions attribute lies); and
 * the few writing helpers {@link MethodWrap}, {@link ForwardingClass} and {@link ConstantPoolTail} share.
 * No lambdas, no ASM: see {@link ConstantPoolTail}.
 */
final class ClassFile {
    static final int ACC_STATIC = 0x0008;
    static final int ACC_NATIVE = 0x0100;
    static final int ACC_ABSTRACT = 0x0400;

    /** One method: its flags, name, descriptor, where its method_info starts and where its Exceptions attribute lies. */
    static final class MethodInfo {
        final int start;
        final int access;
        final int nameIndex;
        final int descriptorIndex;
        final String name;
        final String descriptor;
        /** The Exceptions attribute (name index to its end), or -1 when there is none. */
        final int exceptionsStart;
        final int exceptionsEnd;

        MethodInfo(int start, int access, int nameIndex, int descriptorIndex, String name, String descriptor,
                   int exceptionsStart, int exceptionsEnd) {
            this.start = start;
            this.access = access;
            this.nameIndex = nameIndex;
            this.descriptorIndex = descriptorIndex;
            this.name = name;
            this.descriptor = descriptor;
            this.exceptionsStart = exceptionsStart;
            this.exceptionsEnd = exceptionsEnd;
        }
    }

    final byte[] bytes;
    final int poolCount;
    /** Offset of each constant pool entry's tag (0 for index 0 and the second slot of a long or double). */
    private final int[] entryAt;
    final int poolEnd;
    final int thisClass;
    final int methodsCountAt;
    final List<MethodInfo> methods;
    final int methodsEnd;
    private int pos;

    /** @throws IllegalArgumentException when the bytes are not a class file this understands */
    ClassFile(byte[] bytes) {
        this.bytes = bytes;
        try {
            if (u4() != 0xCAFEBABE) {
                throw new IllegalArgumentException("not a class file");
            }
            pos += 4; // minor, major
            poolCount = u2();
            entryAt = new int[poolCount];
            for (int i = 1; i < poolCount; i++) {
                entryAt[i] = pos;
                int tag = bytes[pos++] & 0xFF;
                switch (tag) {
                    case 1: // Utf8
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
            poolEnd = pos;
            pos += 2; // access
            thisClass = u2();
            pos += 2; // super
            int interfaceCount = u2();
            pos += 2 * interfaceCount;
            int fields = u2();
            for (int f = 0; f < fields; f++) {
                pos += 6;
                skipAttributes();
            }
            methodsCountAt = pos;
            int count = u2();
            List<MethodInfo> list = new ArrayList<>(count);
            for (int m = 0; m < count; m++) {
                list.add(method());
            }
            methods = Collections.unmodifiableList(list);
            methodsEnd = pos;
        } catch (IndexOutOfBoundsException truncated) {
            throw new IllegalArgumentException("not a complete class file", truncated);
        }
    }

    private MethodInfo method() {
        int start = pos;
        int access = u2();
        int nameIndex = u2();
        int descriptorIndex = u2();
        int exceptionsStart = -1;
        int exceptionsEnd = -1;
        int attributes = u2();
        for (int a = 0; a < attributes; a++) {
            int attributeStart = pos;
            int attributeName = u2();
            int length = u4();
            if ("Exceptions".equals(utf8(attributeName))) {
                exceptionsStart = attributeStart;
                exceptionsEnd = pos + length;
            }
            pos += length; // (not "pos += u4()": Java reads pos before u4() moves it)
        }
        return new MethodInfo(start, access, nameIndex, descriptorIndex, utf8(nameIndex), utf8(descriptorIndex),
                exceptionsStart, exceptionsEnd);
    }

    /** The first concrete instance method with this name and descriptor, or null. */
    MethodInfo concreteMethod(String methodName, String descriptor) {
        for (MethodInfo m : methods) {
            if ((m.access & (ACC_STATIC | ACC_ABSTRACT | ACC_NATIVE)) == 0 && m.name.equals(methodName)
                    && m.descriptor.equals(descriptor)) {
                return m;
            }
        }
        return null;
    }

    boolean hasMethodNamed(String methodName) {
        for (MethodInfo m : methods) {
            if (m.name.equals(methodName)) {
                return true;
            }
        }
        return false;
    }

    /** The Utf8 entry at {@code index}, decoded (modified UTF-8), or null when that entry is not a Utf8. */
    String utf8(int index) {
        if (index <= 0 || index >= poolCount || entryAt[index] == 0 || bytes[entryAt[index]] != 1) {
            return null;
        }
        int at = entryAt[index] + 1;
        int length = u2At(at);
        char[] chars = new char[length];
        int n = 0;
        for (int i = at + 2, end = at + 2 + length; i < end; ) {
            int b = bytes[i++] & 0xFF;
            if (b < 0x80) {
                chars[n++] = (char) b;
            } else if ((b & 0xE0) == 0xC0) {
                chars[n++] = (char) ((b & 0x1F) << 6 | (bytes[i++] & 0x3F));
            } else {
                chars[n++] = (char) ((b & 0x0F) << 12 | (bytes[i++] & 0x3F) << 6 | (bytes[i++] & 0x3F));
            }
        }
        return new String(chars, 0, n);
    }

    /** A big-endian u2, as every count and index of the format is written. */
    static void u2(ByteArrayOutputStream out, int v) {
        out.write(v >>> 8);
        out.write(v);
    }

    static void u4(ByteArrayOutputStream out, int v) {
        u2(out, v >>> 16);
        u2(out, v);
    }

    /** A Code attribute of straight-line code: no exception table, no attributes (so no stack map frames). */
    static void code(ByteArrayOutputStream out, int codeName, int maxStack, int maxLocals, byte[] body) {
        u2(out, codeName);
        u4(out, 2 + 2 + 4 + body.length + 2 + 2);
        u2(out, maxStack);
        u2(out, maxLocals);
        u4(out, body.length);
        out.write(body, 0, body.length);
        u2(out, 0); // exception table
        u2(out, 0); // attributes
    }

    private void skipAttributes() {
        int attributes = u2();
        for (int a = 0; a < attributes; a++) {
            pos += 2;
            int length = u4();
            pos += length;
        }
    }

    private int u2At(int at) {
        return (bytes[at] & 0xFF) << 8 | (bytes[at + 1] & 0xFF);
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
}
