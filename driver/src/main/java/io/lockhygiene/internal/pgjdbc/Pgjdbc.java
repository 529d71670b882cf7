package io.lockhygiene.internal.pgjdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

import io.lockhygiene.internal.policy.LockPolicy.Situation;

/**
 * The two things LockHygiene asks pgjdbc beyond java.sql: the BackendKeyData pid and the transaction
 * state. Reached reflectively through {@code unwrap}, with pgjdbc's interfaces loaded from the
 * connection's own class loader, so that the core links against java.sql only: the agent loads it where
 * pgjdbc is not visible (a Spring Boot fat jar, a servlet container), and the driver works with whatever
 * pgjdbc 42.x the application brings. What statements ask on their way (the transaction state) is looked up
 * once per connection class.
 */
public final class Pgjdbc {
    private static final ClassValue<Method> BACKEND_PID = new ClassValue<Method>() {
        @Override
        protected Method computeValue(Class<?> type) {
            return method(type, "getBackendPID");
        }
    };
    private static final ClassValue<Method> TRANSACTION_STATE = new ClassValue<Method>() {
        @Override
        protected Method computeValue(Class<?> type) {
            return method(type, "getTransactionState");
        }
    };

    /**
     * Whether a connection class is pgjdbc's own BaseConnection (the usual raw connection): asked on every
     * statement of an emulating owner, so it is answered once per class, and only a wrapper is unwrapped.
     */
    private static final ClassValue<Boolean> OWN_CONNECTION = instancesOf("org.postgresql.core.BaseConnection");
    /** The same for statements (the holder's are pgjdbc's own). */
    private static final ClassValue<Boolean> OWN_STATEMENT = instancesOf("org.postgresql.core.BaseStatement");

    /** Per class: whether it is (a subtype of) pgjdbc's {@code pgjdbcType}, seen from its own class loader. */
    private static ClassValue<Boolean> instancesOf(String pgjdbcType) {
        return new ClassValue<Boolean>() {
            @Override
            protected Boolean computeValue(Class<?> type) {
                try {
                    return Class.forName(pgjdbcType, false, type.getClassLoader()).isAssignableFrom(type);
                } catch (ClassNotFoundException | LinkageError | RuntimeException notPgjdbc) {
                    return false;
                }
            }
        };
    }

    private static final ClassValue<Method> SET_QUERY_TIMEOUT_MS = new ClassValue<Method>() {
        @Override
        protected Method computeValue(Class<?> type) {
            try {
                Method m = type.getMethod("setQueryTimeoutMs", long.class);
                m.setAccessible(true);
                return m;
            } catch (NoSuchMethodException | RuntimeException e) {
                throw new IllegalStateException("pgjdbc " + type.getName() + " has no setQueryTimeoutMs(long)", e);
            }
        }
    };

    /**
     * pgjdbc's query timeout in milliseconds (PgStatement.setQueryTimeoutMs; JDBC's own takes whole seconds): the
     * statement is cancelled, 57014, when it runs longer.
     */
    public static void setQueryTimeoutMillis(Statement s, long millis) throws SQLException {
        Object base = unwrapStatement(s);
        invoke(SET_QUERY_TIMEOUT_MS.get(base.getClass()), base, millis);
    }

    private static final ClassValue<Method> EXECUTE_WITH_FLAGS = new ClassValue<Method>() {
        @Override
        protected Method computeValue(Class<?> type) {
            try {
                Method m = type.getMethod("executeWithFlags", String.class, int.class);
                m.setAccessible(true);
                return m;
            } catch (NoSuchMethodException | RuntimeException e) {
                throw new IllegalStateException("pgjdbc " + type.getName() + " has no executeWithFlags(String, int)", e);
            }
        }
    };
    /** pgjdbc's QueryExecutor.QUERY_EXECUTE_AS_SIMPLE: send this one text with the simple query protocol. */
    private static final int QUERY_EXECUTE_AS_SIMPLE = 1024;
    /** pgjdbc's QueryExecutor.QUERY_SUPPRESS_BEGIN: send no BEGIN before this text. */
    private static final int QUERY_SUPPRESS_BEGIN = 16;

    private Pgjdbc() {
    }

    /**
     * Runs {@code sql} with the simple query protocol (BaseStatement.executeWithFlags). A session idle in
     * transaction after an extended-protocol statement keeps a snapshot (backend_xmin), which makes
     * CREATE INDEX CONCURRENTLY, REINDEX CONCURRENTLY and VACUUM wait for it; after a simple-protocol
     * statement it holds none.
     */
    public static boolean executeSimple(Statement s, String sql) throws SQLException {
        Object base = unwrapStatement(s);
        return (Boolean) invoke(EXECUTE_WITH_FLAGS.get(base.getClass()), base, sql, QUERY_EXECUTE_AS_SIMPLE);
    }

    /**
     * As {@link #executeSimple(Statement, String)}, and never the BEGIN pgjdbc sends first when autocommit is off
     * and no transaction is open yet (QUERY_SUPPRESS_BEGIN): a question that must not open the application's
     * transaction (which would pin a pooled server for as long as it lasts).
     */
    public static boolean executeSimpleWithoutBegin(Statement s, String sql) throws SQLException {
        Object base = unwrapStatement(s);
        return (Boolean) invoke(EXECUTE_WITH_FLAGS.get(base.getClass()), base, sql,
                QUERY_EXECUTE_AS_SIMPLE | QUERY_SUPPRESS_BEGIN);
    }

    /** {@link #executeSimple(Statement, String)} on a statement of its own. */
    public static void executeSimple(java.sql.Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            executeSimple(s, sql);
        }
    }

    private static Object unwrapStatement(Statement s) throws SQLException {
        if (OWN_STATEMENT.get(s.getClass())) {
            return s;
        }
        for (ClassLoader cl : new ClassLoader[] {s.getClass().getClassLoader(),
                Thread.currentThread().getContextClassLoader(), Pgjdbc.class.getClassLoader()}) {
            try {
                Class<?> iface = Class.forName("org.postgresql.core.BaseStatement", false, cl);
                if (iface.isInstance(s)) {
                    return s;
                }
                if (s.isWrapperFor(iface)) {
                    return s.unwrap(iface);
                }
            } catch (ClassNotFoundException | LinkageError | NullPointerException notThisLoader) {
                // try the next loader
            }
        }
        throw new SQLException("LockHygiene needs pgjdbc (org.postgresql.core.BaseStatement) behind " + s.getClass().getName());
    }

    /** pgjdbc's own result set types, per class loader of the statement (the agent serves several). */
    private static final ClassValue<Object[]> DRIVER_RESULT_SET = new ClassValue<Object[]>() {
        @Override
        protected Object[] computeValue(Class<?> statementType) {
            try {
                ClassLoader cl = statementType.getClassLoader();
                Class<?> base = Class.forName("org.postgresql.core.BaseStatement", false, cl);
                Class<?> field = Class.forName("org.postgresql.core.Field", false, cl);
                Class<?> tuple = Class.forName("org.postgresql.core.Tuple", false, cl);
                Method create = base.getMethod("createDriverResultSet",
                        java.lang.reflect.Array.newInstance(field, 0).getClass(), java.util.List.class);
                return new Object[] {create, field.getConstructor(String.class, int.class), field,
                        tuple.getConstructor(byte[][].class)};
            } catch (ReflectiveOperationException | RuntimeException e) {
                throw new IllegalStateException("pgjdbc has no BaseStatement.createDriverResultSet(Field[], List<Tuple>)", e);
            }
        }
    };

    /**
     * A result set made by pgjdbc itself (BaseStatement.createDriverResultSet), as if the server had sent
     * it: columns {@code labels} of types {@code oids}, rows of values in text format (null for NULL).
     */
    public static java.sql.ResultSet driverResultSet(Statement s, String[] labels, int[] oids, java.util.List<byte[][]> rows)
            throws SQLException {
        Object base = unwrapStatement(s);
        Object[] api = DRIVER_RESULT_SET.get(base.getClass());
        try {
            Object fields = java.lang.reflect.Array.newInstance((Class<?>) api[2], labels.length);
            for (int i = 0; i < labels.length; i++) {
                java.lang.reflect.Array.set(fields, i,
                        ((java.lang.reflect.Constructor<?>) api[1]).newInstance(labels[i], oids[i]));
            }
            java.util.List<Object> tuples = new java.util.ArrayList<>(rows.size());
            for (byte[][] row : rows) {
                tuples.add(((java.lang.reflect.Constructor<?>) api[3]).newInstance((Object) row));
            }
            return (java.sql.ResultSet) invoke((Method) api[0], base, fields, tuples);
        } catch (ReflectiveOperationException e) {
            throw new SQLException("LockHygiene could not make a pgjdbc result set", e);
        }
    }

    /**
     * pgjdbc's parse of a text, apart from its execution: BaseConnection.getQueryExecutor(), its
     * createQueryKey(sql, escapes, not parameterized) and createQueryByKey; BaseStatement.executeWithFlags of
     * the parsed query; PGStatement.setPrepareThreshold. Per pgjdbc class (its loader's pgjdbc); null where
     * pgjdbc has none of it.
     */
    private static final ClassValue<Method[]> PARSE = new ClassValue<Method[]>() {
        @Override
        protected Method[] computeValue(Class<?> pgjdbcType) {
            try {
                ClassLoader cl = pgjdbcType.getClassLoader();
                Class<?> connection = Class.forName("org.postgresql.core.BaseConnection", false, cl);
                Class<?> executor = Class.forName("org.postgresql.core.QueryExecutor", false, cl);
                Class<?> cached = Class.forName("org.postgresql.core.CachedQuery", false, cl);
                Class<?> statement = Class.forName("org.postgresql.core.BaseStatement", false, cl);
                Class<?> pgStatement = Class.forName("org.postgresql.PGStatement", false, cl);
                return new Method[] {connection.getMethod("getQueryExecutor"),
                        executor.getMethod("createQueryKey", String.class, boolean.class, boolean.class, String[].class),
                        executor.getMethod("createQueryByKey", Object.class),
                        statement.getMethod("executeWithFlags", cached, int.class),
                        pgStatement.getMethod("setPrepareThreshold", int.class)};
            } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
                return null;
            }
        }
    };

    /**
     * {@code sql} parsed by pgjdbc as a Statement's text is (escapes processed, no {@code ?} parameters), to be
     * run many times by {@link #executeParsed} without pgjdbc parsing it again each time; null when this pgjdbc
     * cannot (then run the text).
     */
    public static Object parse(Connection c, String sql) throws SQLException {
        Object base = OWN_CONNECTION.get(c.getClass()) ? c : unwrap(c, "org.postgresql.core.BaseConnection");
        Method[] api = PARSE.get(base.getClass());
        if (api == null) {
            return null;
        }
        Object executor = invoke(api[0], base);
        return invoke(api[2], executor, invoke(api[1], executor, sql, true, false, null));
    }

    /**
     * Runs a text {@link #parse} made, on statement {@code s} of the same connection, as an execution of its text
     * would run: one-shot (an unnamed server statement, never a prepared one, as pgjdbc sends a Statement's
     * text), whatever times it runs. Returns what execute returns.
     */
    public static boolean executeParsed(Statement s, Object parsed) throws SQLException {
        Object base = unwrapStatement(s);
        Method[] api = PARSE.get(base.getClass());
        invoke(api[4], base, 0);
        return (Boolean) invoke(api[3], base, parsed, 0);
    }

    /** PGConnection.getBackendPID(): the pid PgBouncer or PostgreSQL announced at connect. */
    public static int backendPid(Connection c) throws SQLException {
        Object pg = unwrap(c, "org.postgresql.PGConnection");
        return (Integer) invoke(BACKEND_PID.get(pg.getClass()), pg);
    }

    /** True unless BaseConnection.getTransactionState() is IDLE (no transaction open on the server). */
    public static boolean inTransaction(Connection c) throws SQLException {
        return transactionStatus(c) != Situation.TransactionStatus.IDLE;
    }

    /**
     * True when the next statement runs inside a transaction block: one is open on the server, or pgjdbc opens one
     * before it (autocommit off); as {@link Situation#statementRunsInTransaction}, without a whole situation.
     */
    public static boolean statementRunsInTransaction(Connection c) throws SQLException {
        return inTransaction(c) || !c.getAutoCommit();
    }

    /**
     * BaseConnection.getTransactionState(): the status the server sent with its last ReadyForQuery
     * (IDLE, OPEN, FAILED), whatever the JDBC API was told.
     */
    public static Situation.TransactionStatus transactionStatus(Connection c) throws SQLException {
        Object base = OWN_CONNECTION.get(c.getClass()) ? c : unwrap(c, "org.postgresql.core.BaseConnection");
        String state = String.valueOf(invoke(TRANSACTION_STATE.get(base.getClass()), base));
        switch (state) {
            case "IDLE":
                return Situation.TransactionStatus.IDLE;
            case "FAILED":
                return Situation.TransactionStatus.FAILED;
            default:
                return Situation.TransactionStatus.OPEN;
        }
    }

    private static Object unwrap(Connection c, String interfaceName) throws SQLException {
        for (ClassLoader cl : new ClassLoader[] {c.getClass().getClassLoader(),
                Thread.currentThread().getContextClassLoader(), Pgjdbc.class.getClassLoader()}) {
            try {
                Class<?> iface = Class.forName(interfaceName, false, cl);
                if (iface.isInstance(c)) {
                    return c;
                }
                if (c.isWrapperFor(iface)) {
                    return c.unwrap(iface);
                }
            } catch (ClassNotFoundException | LinkageError | NullPointerException notThisLoader) {
                // try the next loader
            }
        }
        throw new SQLException("LockHygiene needs pgjdbc (" + interfaceName + ") behind " + c.getClass().getName());
    }

    private static Method method(Class<?> type, String name) {
        try {
            Method m = type.getMethod(name);
            m.setAccessible(true); // public method of a possibly non-public class
            return m;
        } catch (NoSuchMethodException | RuntimeException e) {
            throw new IllegalStateException("pgjdbc " + type.getName() + " has no " + name + "()", e);
        }
    }

    private static Object invoke(Method m, Object target, Object... args) throws SQLException {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof SQLException) {
                throw (SQLException) e.getCause();
            }
            throw new SQLException("pgjdbc " + m.getName() + " failed", e.getCause());
        } catch (IllegalAccessException | RuntimeException e) {
            throw new SQLException("LockHygiene could not call pgjdbc " + m.getName(), e);
        }
    }
}
