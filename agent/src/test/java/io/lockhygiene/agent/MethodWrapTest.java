package io.lockhygiene.agent;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverPropertyInfo;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.logging.Logger;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The start-up edit without ASM: the edited classes are loaded and run, so the JVM's verifier checks them too. */
class MethodWrapTest {
    private static final String HOOKS = "io/lockhygiene/agent/MethodWrapTest$Hooks";
    static final List<Object[]> CALLS = new ArrayList<>();
    static final Connection WRAPPED = dummyConnection();

    /** What the hooks record; stands in for AgentHooks. */
    public static final class Hooks {
        public static final Connection MADE = dummyConnection();

        public static Connection onConnect(Connection c, Driver d, String url, Properties info) {
            CALLS.add(new Object[] {"connect", c, d, url, info});
            return c == null ? null : WRAPPED;
        }

        public static void onPoolReturn(Object pooled) {
            CALLS.add(new Object[] {"close", pooled, Thread.holdsLock(pooled)});
        }
    }

    /**
     * A driver like pgjdbc's: connect returns a connection, null for a URL not its own, or throws. Uses
     * nothing of the test class (it is loaded edited, by another class loader).
     */
    public static class FakeDriver implements Driver {
        public static final Connection MADE = Hooks.MADE; // Hooks is public: reachable from the other loader

        @Override
        public Connection connect(String url, Properties info) throws SQLException {
            if (url.equals("fail")) {
                throw new SQLException("refused", "08001");
            }
            return url.startsWith("jdbc:fake:") ? MADE : null;
        }

        @Override
        public boolean acceptsURL(String url) {
            return true;
        }

        @Override
        public DriverPropertyInfo[] getPropertyInfo(String url, Properties info) {
            return new DriverPropertyInfo[0];
        }

        @Override
        public int getMajorVersion() {
            return 1;
        }

        @Override
        public int getMinorVersion() {
            return 0;
        }

        @Override
        public boolean jdbcCompliant() {
            return false;
        }

        @Override
        public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            throw new SQLFeatureNotSupportedException();
        }
    }

    /** A pool's connection like DBCP2's: a synchronized close() with a body of its own. */
    public static class FakePooledConnection {
        public int closes;

        public synchronized void close() throws SQLException {
            closes++;
            if (closes > 1) {
                throw new SQLException("already closed");
            }
        }
    }

    @Test
    void connectsResultGoesThroughTheHookAndTheOriginalStaysAsCompiled() throws Exception {
        CALLS.clear();
        Class<?> edited = load(FakeDriver.class, wrapConnect(bytesOf(FakeDriver.class)));
        Driver d = (Driver) edited.getConstructor().newInstance();
        Properties info = new Properties();
        assertSame(WRAPPED, d.connect("jdbc:fake:x", info));
        assertEquals(1, CALLS.size());
        assertSame(FakeDriver.MADE, CALLS.get(0)[1]);
        assertSame(d, CALLS.get(0)[2]);
        assertEquals("jdbc:fake:x", CALLS.get(0)[3]);
        assertSame(info, CALLS.get(0)[4]);
        assertNull(d.connect("jdbc:other:x", info), "a URL not its own still gives null");
        SQLException e = assertThrows(SQLException.class, () -> d.connect("fail", info));
        assertEquals("08001", e.getSQLState(), "the driver's own exception, unchanged");
        assertEquals(2, CALLS.size(), "no hook call when the original throws");

        Method connect = edited.getMethod("connect", String.class, Properties.class);
        assertTrue(Modifier.isPublic(connect.getModifiers()));
        assertArrayEquals(new Class<?>[] {SQLException.class}, connect.getExceptionTypes());
        Method original = edited.getDeclaredMethod("lockhygiene$connect", String.class, Properties.class);
        assertTrue(Modifier.isPrivate(original.getModifiers()) && original.isSynthetic());
    }

    @Test
    void closeCallsTheHookFirstUnderTheSameMonitor() throws Exception {
        CALLS.clear();
        byte[] bytes = MethodWrap.wrap(bytesOf(FakePooledConnection.class), "close", "()V", MethodWrap.HOOK_FIRST,
                HOOKS, "onPoolReturn", "(Ljava/lang/Object;)V");
        Class<?> edited = load(FakePooledConnection.class, bytes);
        Method close = edited.getMethod("close");
        assertTrue(Modifier.isSynchronized(close.getModifiers()), "the wrapper keeps synchronized");
        Object instance = edited.getConstructor().newInstance();
        close.invoke(instance);
        assertEquals(1, CALLS.size());
        assertSame(instance, CALLS.get(0)[1]);
        assertEquals(Boolean.TRUE, CALLS.get(0)[2], "the hook ran holding the connection's monitor, as its body does");
        assertEquals(1, edited.getField("closes").getInt(instance));
        InvocationTargetException e = assertThrows(InvocationTargetException.class, () -> close.invoke(instance));
        assertEquals("already closed", e.getCause().getMessage(), "the body's own exception, unchanged");
        assertEquals(2, CALLS.size());
    }

    @Test
    void pgjdbcsDriverIsEditedAndVerifies() throws Exception {
        byte[] original = bytesOf(org.postgresql.Driver.class);
        byte[] edited = MethodWrap.wrap(original, "connect", PgjdbcTransformer.CONNECT_DESC, MethodWrap.RESULT_THROUGH_HOOK,
                PgjdbcTransformer.HOOKS, "onConnect", PgjdbcTransformer.ON_CONNECT_DESC);
        assertNotNull(edited);
        Class<?> c = load(org.postgresql.Driver.class, edited);
        c.getDeclaredMethods(); // links the class: the verifier has passed it
        assertNotNull(c.getDeclaredMethod("lockhygiene$connect", String.class, Properties.class));
        assertNull(MethodWrap.wrap(edited, "connect", PgjdbcTransformer.CONNECT_DESC, MethodWrap.RESULT_THROUGH_HOOK,
                PgjdbcTransformer.HOOKS, "onConnect", PgjdbcTransformer.ON_CONNECT_DESC), "edited once only");
    }

    @Test
    void aClassWithoutTheMethodIsLeftAloneAndBadBytesAreRefused() throws Exception {
        assertNull(wrapConnect(bytesOf(MethodWrapTest.class)));
        assertThrows(IllegalArgumentException.class, () -> wrapConnect(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
        byte[] real = bytesOf(FakeDriver.class);
        assertThrows(IllegalArgumentException.class, () -> wrapConnect(java.util.Arrays.copyOf(real, real.length / 2)));
    }

    private static byte[] wrapConnect(byte[] bytes) {
        return MethodWrap.wrap(bytes, "connect", PgjdbcTransformer.CONNECT_DESC, MethodWrap.RESULT_THROUGH_HOOK, HOOKS,
                "onConnect", PgjdbcTransformer.ON_CONNECT_DESC);
    }

    static byte[] bytesOf(Class<?> c) throws IOException {
        try (InputStream in = c.getResourceAsStream("/" + c.getName().replace('.', '/') + ".class")) {
            return in.readAllBytes();
        }
    }

    /** Defines {@code bytes} under {@code like}'s name in a loader of its own; everything else comes from the test's. */
    static Class<?> load(Class<?> like, byte[] bytes) throws ClassNotFoundException {
        ClassLoader parent = MethodWrapTest.class.getClassLoader();
        return Class.forName(like.getName(), false, new ClassLoader(parent) {
            @Override
            protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
                synchronized (getClassLoadingLock(name)) {
                    if (name.equals(like.getName())) {
                        Class<?> done = findLoadedClass(name);
                        return done != null ? done : defineClass(name, bytes, 0, bytes.length);
                    }
                    return super.loadClass(name, resolve);
                }
            }
        });
    }

    private static Connection dummyConnection() {
        return (Connection) Proxy.newProxyInstance(MethodWrapTest.class.getClassLoader(), new Class<?>[] {Connection.class},
                (p, m, a) -> m.getName().equals("toString") ? "dummy" : null);
    }
}
