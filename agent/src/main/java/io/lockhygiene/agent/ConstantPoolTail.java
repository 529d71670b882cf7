package io.lockhygiene.agent;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * Constant pool entries written after a pool's existing ones (or into an empty pool), each added once.
 * Together with {@link MethodWrap} and {@link ForwardingClass} it replaces ASM where the agent runs at
 * start-up: the class file format is fixed and what we write is straight-line code (no branches, so no
 * stack map frames), and loading ASM's ~30 classes cost a service tens of milliseconds before its first
 * query (and lambdas are avoided for the same reason). Names and descriptors are ASCII (Java identifiers
 * of classes we know), so Utf8 entries are the names' bytes as they are.
 */
final class ConstantPoolTail {
    private static final int UTF8 = 1;
    private static final int CLASS = 7;
    private static final int METHODREF = 10;
    private static final int INTERFACE_METHODREF = 11;
    private static final int NAME_AND_TYPE = 12;

    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final Map<String, Integer> added = new HashMap<>();
    private int next;

    /** @param firstIndex the index the first added entry gets (the old constant_pool_count, or 1) */
    ConstantPoolTail(int firstIndex) {
        this.next = firstIndex;
    }

    int utf8(String s) {
        Integer known = added.get("U" + s);
        if (known != null) {
            return known;
        }
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        for (byte c : b) {
            if (c <= 0) { // NUL and non-ASCII are written differently in the class file's modified UTF-8
                throw new IllegalArgumentException("not an ASCII name: " + s);
            }
        }
        bytes.write(UTF8);
        ClassFile.u2(bytes, b.length);
        bytes.write(b, 0, b.length);
        return added("U" + s);
    }

    int classRef(String internalName) {
        return twoIndices(CLASS, utf8(internalName), -1);
    }

    int methodRef(int owner, String name, String descriptor) {
        return twoIndices(METHODREF, owner, nameAndType(utf8(name), utf8(descriptor)));
    }

    int interfaceMethodRef(int owner, String name, String descriptor) {
        return twoIndices(INTERFACE_METHODREF, owner, nameAndType(utf8(name), utf8(descriptor)));
    }

    /** A NameAndType over Utf8 entries already in the pool (old or added). */
    int nameAndType(int name, int descriptor) {
        return twoIndices(NAME_AND_TYPE, name, descriptor);
    }

    /** An entry of a tag and one or two u2 indices (second &lt; 0: none). No lambdas here: see the class comment. */
    private int twoIndices(int tag, int first, int second) {
        String key = tag + ":" + first + ":" + second;
        Integer known = added.get(key);
        if (known != null) {
            return known;
        }
        bytes.write(tag);
        ClassFile.u2(bytes, first);
        if (second >= 0) {
            ClassFile.u2(bytes, second);
        }
        return added(key);
    }

    /** The constant_pool_count a class file with these entries has. */
    int count() {
        if (next > 0xFFFF) {
            throw new IllegalStateException("constant pool full");
        }
        return next;
    }

    byte[] toByteArray() {
        return bytes.toByteArray();
    }

    private int added(String key) {
        added.put(key, next);
        return next++;
    }
}
