package io.lockhygiene.agent;

import java.io.ByteArrayOutputStream;
import java.lang.reflect.Method;
import java.util.List;

/**
 * Writes the class file of {@link PgConnectionSubclass}'s subclass: a public final class extending one
 * class and implementing one interface, a constructor passing its arguments to the super constructor, and
 * per interface method {@code return ((Owner) pgDelegate()).m(args);}. Straight-line code only, so no
 * stack map frames; written by hand rather than with ASM for the reason given in {@link ConstantPoolTail}.
 */
final class ForwardingClass {
    private static final int JAVA_11 = 55;
    private static final int ACC_PUBLIC = 0x0001;
    private static final int ACC_FINAL = 0x0010;
    private static final int ACC_SUPER = 0x0020;

    private ForwardingClass() {
    }

    /**
     * @param ctorArgs the super constructor's parameters, all references
     * @param delegate the super class's {@code ()Ljava/sql/Connection;} method whose result the calls go to
     */
    static byte[] write(String name, String superName, Class<?>[] ctorArgs, String delegate, Class<?> iface,
                        List<Method> forwards) {
        ConstantPoolTail pool = new ConstantPoolTail(1);
        int thisClass = pool.classRef(name);
        int superClass = pool.classRef(superName);
        int ifaceClass = pool.classRef(internalName(iface));
        int code = pool.utf8("Code");
        ByteArrayOutputStream methods = new ByteArrayOutputStream();

        String ctorDesc = descriptor(ctorArgs, void.class);
        ByteArrayOutputStream init = new ByteArrayOutputStream();
        for (int slot = 0; slot <= ctorArgs.length; slot++) {
            load(init, 0x19, slot); // aload
        }
        init.write(0xb7); // invokespecial
        ClassFile.u2(init, pool.methodRef(superClass, "<init>", ctorDesc));
        init.write(0xb1); // return
        method(methods, ACC_PUBLIC, pool.utf8("<init>"), pool.utf8(ctorDesc), code, 1 + ctorArgs.length,
                1 + ctorArgs.length, init.toByteArray(), 0, null);

        int delegateRef = pool.methodRef(superClass, delegate, "()Ljava/sql/Connection;");
        for (Method m : forwards) {
            String desc = descriptor(m.getParameterTypes(), m.getReturnType());
            int owner = pool.classRef(internalName(m.getDeclaringClass()));
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            body.write(0x2a); // aload_0
            body.write(0xb6); // invokevirtual
            ClassFile.u2(body, delegateRef);
            body.write(0xc0); // checkcast
            ClassFile.u2(body, owner);
            int slot = 1;
            for (Class<?> p : m.getParameterTypes()) {
                load(body, loadOpcode(p), slot);
                slot += size(p);
            }
            body.write(0xb9); // invokeinterface
            ClassFile.u2(body, pool.interfaceMethodRef(owner, m.getName(), desc));
            body.write(slot); // count: the receiver and the arguments' slots
            body.write(0);
            body.write(returnOpcode(m.getReturnType()));
            int[] exceptions = new int[m.getExceptionTypes().length];
            for (int e = 0; e < exceptions.length; e++) {
                exceptions[e] = pool.classRef(internalName(m.getExceptionTypes()[e]));
            }
            method(methods, ACC_PUBLIC, pool.utf8(m.getName()), pool.utf8(desc), code, Math.max(slot, size(m.getReturnType())),
                    slot, body.toByteArray(), exceptions.length == 0 ? 0 : pool.utf8("Exceptions"), exceptions);
        }

        ByteArrayOutputStream out = new ByteArrayOutputStream(512 + methods.size());
        ClassFile.u4(out, 0xCAFEBABE);
        ClassFile.u2(out, 0);
        ClassFile.u2(out, JAVA_11);
        ClassFile.u2(out, pool.count());
        byte[] entries = pool.toByteArray();
        out.write(entries, 0, entries.length);
        ClassFile.u2(out, ACC_PUBLIC | ACC_FINAL | ACC_SUPER);
        ClassFile.u2(out, thisClass);
        ClassFile.u2(out, superClass);
        ClassFile.u2(out, 1);
        ClassFile.u2(out, ifaceClass);
        ClassFile.u2(out, 0); // fields
        ClassFile.u2(out, 1 + forwards.size());
        byte[] m = methods.toByteArray();
        out.write(m, 0, m.length);
        ClassFile.u2(out, 0); // class attributes
        return out.toByteArray();
    }

    private static void method(ByteArrayOutputStream out, int access, int name, int desc, int code, int maxStack,
                               int maxLocals, byte[] body, int exceptionsName, int[] exceptions) {
        ClassFile.u2(out, access);
        ClassFile.u2(out, name);
        ClassFile.u2(out, desc);
        ClassFile.u2(out, exceptionsName == 0 ? 1 : 2);
        ClassFile.code(out, code, maxStack, maxLocals, body);
        if (exceptionsName != 0) {
            ClassFile.u2(out, exceptionsName);
            ClassFile.u4(out, 2 + 2 * exceptions.length);
            ClassFile.u2(out, exceptions.length);
            for (int e : exceptions) {
                ClassFile.u2(out, e);
            }
        }
    }

    private static void load(ByteArrayOutputStream out, int opcode, int slot) {
        if (slot > 0xFF) {
            throw new IllegalArgumentException("too many parameters");
        }
        out.write(opcode);
        out.write(slot);
    }

    private static int loadOpcode(Class<?> t) {
        if (t == long.class) {
            return 0x16; // lload
        }
        if (t == float.class) {
            return 0x17; // fload
        }
        if (t == double.class) {
            return 0x18; // dload
        }
        return t.isPrimitive() ? 0x15 : 0x19; // iload (boolean, byte, char, short, int), aload
    }

    private static int returnOpcode(Class<?> t) {
        if (t == void.class) {
            return 0xb1;
        }
        if (t == long.class) {
            return 0xad;
        }
        if (t == float.class) {
            return 0xae;
        }
        if (t == double.class) {
            return 0xaf;
        }
        return t.isPrimitive() ? 0xac : 0xb0;
    }

    private static int size(Class<?> t) {
        return t == void.class ? 0 : t == long.class || t == double.class ? 2 : 1;
    }

    static String internalName(Class<?> c) {
        return c.getName().replace('.', '/');
    }

    static String descriptor(Class<?>[] parameters, Class<?> returnType) {
        StringBuilder b = new StringBuilder("(");
        for (Class<?> p : parameters) {
            descriptor(b, p);
        }
        descriptor(b.append(')'), returnType);
        return b.toString();
    }

    private static void descriptor(StringBuilder b, Class<?> t) {
        while (t.isArray()) {
            b.append('[');
            t = t.getComponentType();
        }
        if (!t.isPrimitive()) {
            b.append('L').append(internalName(t)).append(';');
        } else if (t == int.class) {
            b.append('I');
        } else if (t == long.class) {
            b.append('J');
        } else if (t == boolean.class) {
            b.append('Z');
        } else if (t == void.class) {
            b.append('V');
        } else if (t == double.class) {
            b.append('D');
        } else if (t == float.class) {
            b.append('F');
        } else if (t == byte.class) {
            b.append('B');
        } else if (t == char.class) {
            b.append('C');
        } else {
            b.append('S');
        }
    }
}
