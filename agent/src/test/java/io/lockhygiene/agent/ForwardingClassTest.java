package io.lockhygiene.agent;

import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The hand-written forwarding subclass, loaded and called: every kind of parameter and return, and exceptions. */
class ForwardingClassTest {
    private static final String NAME = "io/lockhygiene/agent/generated/ForwardingClassTestTarget";

    /** Stands in for PGConnection: what the subclass adds, each call forwarded to the delegate. */
    public interface Extra {
        int add(int a, int b);

        long twice(long a);

        double half(double a);

        float third(float a);

        boolean not(boolean a);

        String mix(byte b, short s, char c, long l, double d, String text);

        String[] reversed(String[] a);

        void fail() throws IOException;
    }

    /** Stands in for GeneratedConnection: a constructor of references and the delegate. */
    public abstract static class Base {
        private final Connection delegate;
        public final Object second;

        public Base(Connection delegate, Object second) {
            this.delegate = delegate;
            this.second = second;
        }

        public final Connection pgDelegate() {
            return delegate;
        }
    }

    @Test
    void everyMethodForwardsItsArgumentsAndItsResult() throws Exception {
        List<String> calls = new ArrayList<>();
        Object delegate = Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class, Extra.class},
                (p, m, a) -> {
                    calls.add(m.getName() + Arrays.deepToString(a));
                    switch (m.getName()) {
                        case "add":
                            return (Integer) a[0] + (Integer) a[1];
                        case "twice":
                            return (Long) a[0] * 2;
                        case "half":
                            return (Double) a[0] / 2;
                        case "third":
                            return (Float) a[0] / 3;
                        case "not":
                            return !(Boolean) a[0];
                        case "mix":
                            return a[0] + "," + a[1] + "," + a[2] + "," + a[3] + "," + a[4] + "," + a[5];
                        case "reversed":
                            String[] in = (String[]) a[0];
                            return new String[] {in[1], in[0]};
                        case "fail":
                            throw new IOException("from the delegate");
                        default:
                            return null;
                    }
                });
        Extra e = (Extra) newInstance(delegate, "second");
        assertEquals(5, e.add(2, 3));
        assertEquals(2L * Integer.MAX_VALUE * 2, e.twice(2L * Integer.MAX_VALUE));
        assertEquals(1.25, e.half(2.5));
        assertEquals(1.0f, e.third(3.0f));
        assertTrue(e.not(false));
        assertEquals("7,-2,x,9000000000,0.5,t", e.mix((byte) 7, (short) -2, 'x', 9_000_000_000L, 0.5, "t"));
        assertArrayEquals(new String[] {"b", "a"}, e.reversed(new String[] {"a", "b"}));
        IOException thrown = assertThrows(IOException.class, e::fail);
        assertEquals("from the delegate", thrown.getMessage());
        assertEquals(8, calls.size());
        assertEquals("second", ((Base) e).second, "the constructor's arguments reach the super constructor");
        Method fail = e.getClass().getMethod("fail");
        assertArrayEquals(new Class<?>[] {IOException.class}, fail.getExceptionTypes());
        assertSame(e.getClass(), e.getClass().getMethod("add", int.class, int.class).getDeclaringClass());
    }

    @Test
    void descriptorsAreTheJvmsOwn() {
        assertEquals("(I[JLjava/lang/String;[[Z)V",
                ForwardingClass.descriptor(new Class<?>[] {int.class, long[].class, String.class, boolean[][].class}, void.class));
        assertEquals("()Ljava/sql/Connection;", ForwardingClass.descriptor(new Class<?>[0], Connection.class));
        assertEquals("(BSCFD)J", ForwardingClass.descriptor(
                new Class<?>[] {byte.class, short.class, char.class, float.class, double.class}, long.class));
    }

    private static Object newInstance(Object delegate, Object second) throws Exception {
        List<Method> forwards = new ArrayList<>(Arrays.asList(Extra.class.getMethods()));
        byte[] bytes = ForwardingClass.write(NAME, ForwardingClass.internalName(Base.class),
                new Class<?>[] {Connection.class, Object.class}, "pgDelegate", Extra.class, forwards);
        Class<?> made = new ClassLoader(ForwardingClassTest.class.getClassLoader()) {
            Class<?> define() {
                return defineClass(NAME.replace('/', '.'), bytes, 0, bytes.length);
            }
        }.define();
        return made.getConstructor(Connection.class, Object.class).newInstance(delegate, second);
    }
}
