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

    /** One interface method to forward: its name, descriptor, declaring interface and declared exceptions (internal names). */
    static final class Forward {
        final String name;
        final String descriptor;
        final String owner;
        final List<String> exceptions;

        Forward(String name, String descriptor, String owner, List<String> exceptions) {
            this.name = name;
            this.descriptor = descriptor;
            this.owner = owner;
            this.exceptions = exceptions;
        }

        /** From reflection (the fallback when the interface's class file cannot be read). */
        static Forward of(Method m) {
            List<String> exceptions = new java.util.ArrayList<>();
            for (Class<?> e : m.getExceptionTypes()) {
                exceptions.add(internalName(e));
            }
            return new Forward(m.getName(), descriptor(m.getParameterTypes(), m.getReturnType()),
                    internalName(m.getDeclaringClass()), exceptions);
        }
    }

    /**
     * @param ctorArgs the super constructor's parameters, all references
     * @param delegate the super class's {@code ()Ljava/sql/Connection;} method whose result the calls go to
     */
    static byte[] write(String name, String superName, Class<?>[] ctorArgs, String delegate, String iface,
                        List<Forward> forwards) {
        ConstantPoolTail pool = new ConstantPoolTail(1);
        int thisClass = pool.classRef(name);
        int superClass = pool.classRef(superName);
        int ifaceClass = pool.classRef(iface);
        int code = pool.utf8("Code");
        ByteArrayOutputStream methods = new ByteArrayOutputStream();

        String ctorDesc = descriptor(ctorArgs, void.class);
        ByteArrayOutputStream init = new ByteArrayOutputStream();
        for (int slot = 0; slot <= ctorArgs.length; slot++) {
            load(init, 0x19, slot); // aload
        }
        init.write(0xb7); // invokespecial
        MethodWrap.u2(init, pool.methodRef(superClass, "<init>", ctorDesc));
        init.write(0xb1); // return
        method(methods, ACC_PUBLIC, pool.utf8("<init>"), pool.utf8(ctorDesc), code, 1 + ctorArgs.length,
                1 + ctorArgs.length, init.toByteArray(), 0, null);

        int delegateRef = pool.methodRef(superClass, delegate, "()Ljava/sql/Connection;");
        for (Forward m : forwards) {
            int owner = pool.classRef(m.owner);
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            body.write(0x2a); // aload_0
            body.write(0xb6); // invokevirtual
            MethodWrap.u2(body, delegateRef);
            body.write(0xc0); // checkcast
            MethodWrap.u2(body, owner);
            int slot = 1;
            int i = 1; // after '('
            String desc = m.descriptor;
            while (desc.charAt(i) != ')') {
                char kind = desc.charAt(i);
                load(body, loadOpcode(kind), slot);
                slot += kind == 'J' || kind == 'D' ? 2 : 1;
                i = endOfType(desc, i);
            }
            char returns = desc.charAt(i + 1);
            body.write(0xb9); // invokeinterface
            MethodWrap.u2(body, pool.interfaceMethodRef(owner, m.name, desc));
            body.write(slot); // count: the receiver and the arguments' slots
            body.write(0);
            body.write(returnOpcode(returns));
            int[] exceptions = new int[m.exceptions.size()];
            for (int e = 0; e < exceptions.length; e++) {
                exceptions[e] = pool.classRef(m.exceptions.get(e));
            }
            int returnSize = returns == 'V' ? 0 : returns == 'J' || returns == 'D' ? 2 : 1;
            method(methods, ACC_PUBLIC, pool.utf8(m.name), pool.utf8(desc), code, Math.max(slot, returnSize), slot,
                    body.toByteArray(), exceptions.length == 0 ? 0 : pool.utf8("Exceptions"), exceptions);
        }

        ByteArrayOutputStream out = new ByteArrayOutputStream(512 + methods.size());
        MethodWrap.u4(out, 0xCAFEBABE);
        MethodWrap.u2(out, 0);
        MethodWrap.u2(out, JAVA_11);
        MethodWrap.u2(out, pool.count());
        byte[] entries = pool.toByteArray();
        out.write(entries, 0, entries.length);
        MethodWrap.u2(out, ACC_PUBLIC | ACC_FINAL | ACC_SUPER);
        MethodWrap.u2(out, thisClass);
        MethodWrap.u2(out, superClass);
        MethodWrap.u2(out, 1);
        MethodWrap.u2(out, ifaceClass);
        MethodWrap.u2(out, 0); // fields
        MethodWrap.u2(out, 1 + forwards.size());
        byte[] m = methods.toByteArray();
        out.write(m, 0, m.length);
        MethodWrap.u2(out, 0); // class attributes
        return out.toByteArray();
    }

    private static void method(ByteArrayOutputStream out, int access, int name, int desc, int code, int maxStack,
                               int maxLocals, byte[] body, int exceptionsName, int[] exceptions) {
        MethodWrap.u2(out, access);
        MethodWrap.u2(out, name);
        MethodWrap.u2(out, desc);
        MethodWrap.u2(out, exceptionsName == 0 ? 1 : 2);
        MethodWrap.u2(out, code);
        MethodWrap.u4(out, 2 + 2 + 4 + body.length + 2 + 2);
        MethodWrap.u2(out, maxStack);
        MethodWrap.u2(out, maxLocals);
        MethodWrap.u4(out, body.length);
        out.write(body, 0, body.length);
        MethodWrap.u2(out, 0); // exception table
        MethodWrap.u2(out, 0); // attributes
        if (exceptionsName != 0) {
            MethodWrap.u2(out, exceptionsName);
            MethodWrap.u4(out, 2 + 2 * exceptions.length);
            MethodWrap.u2(out, exceptions.length);
            for (int e : exceptions) {
                MethodWrap.u2(out, e);
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

    /** The index just past the field type starting at {@code i} in a descriptor. */
    private static int endOfType(String desc, int i) {
        while (desc.charAt(i) == '[') {
            i++;
        }
        return desc.charAt(i) == 'L' ? desc.indexOf(';', i) + 1 : i + 1;
    }

    private static int loadOpcode(char kind) {
        switch (kind) {
            case 'J':
                return 0x16; // lload
            case 'F':
                return 0x17; // fload
            case 'D':
                return 0x18; // dload
            case 'L':
            case '[':
                return 0x19; // aload
            default:
                return 0x15; // iload: boolean, byte, char, short, int
        }
    }

    private static int returnOpcode(char kind) {
        switch (kind) {
            case 'V':
                return 0xb1;
            case 'J':
                return 0xad;
            case 'F':
                return 0xae;
            case 'D':
                return 0xaf;
            case 'L':
            case '[':
                return 0xb0;
            default:
                return 0xac;
        }
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
