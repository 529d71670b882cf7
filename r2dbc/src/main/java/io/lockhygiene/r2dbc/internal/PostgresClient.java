package io.lockhygiene.r2dbc.internal;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.Optional;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.Wrapped;

/**
 * r2dbc-postgresql's own client under a connection (its field {@code client}), read by reflection, as pgjdbc's
 * classes are read by the driver: the backend pid the server announced, and the transaction status of the last
 * ReadyForQuery, which is what the server reports (r2dbc-postgresql shows only "in a transaction or not" through
 * the SPI). Inert where the connection is not r2dbc-postgresql's or the client cannot be read: no pid, and a
 * transaction never known to have failed.
 */
final class PostgresClient {
    private static final PostgresClient NONE = new PostgresClient(null, null, null);

    private final Object client;
    private final Method processId;
    private final Method transactionStatus;

    private PostgresClient(Object client, Method processId, Method transactionStatus) {
        this.client = client;
        this.processId = processId;
        this.transactionStatus = transactionStatus;
    }

    /** The client under {@code connection} (through its wrappers), or an inert one. */
    static PostgresClient of(Connection connection) {
        Object c = connection;
        while (c instanceof Wrapped && ((Wrapped<?>) c).unwrap() != null && ((Wrapped<?>) c).unwrap() != c) {
            c = ((Wrapped<?>) c).unwrap();
        }
        try {
            for (Class<?> k = c.getClass(); k != null; k = k.getSuperclass()) {
                for (Field f : k.getDeclaredFields()) {
                    if ("client".equals(f.getName())) {
                        f.setAccessible(true);
                        Object client = f.get(c);
                        Class<?> api = Class.forName("io.r2dbc.postgresql.client.Client", false, k.getClassLoader());
                        return new PostgresClient(client, api.getMethod("getProcessId"),
                                api.getMethod("getTransactionStatus"));
                    }
                }
            }
        } catch (ReflectiveOperationException | RuntimeException unreadable) {
            return NONE;
        }
        return NONE;
    }

    /** The backend pid of the BackendKeyData the server sent, or null. */
    Integer processId() {
        if (client == null) {
            return null;
        }
        try {
            Object pid = processId.invoke(client);
            return pid instanceof Optional ? (Integer) ((Optional<?>) pid).orElse(null) : null;
        } catch (ReflectiveOperationException | RuntimeException unreadable) {
            return null;
        }
    }

    /**
     * True when the server reported the open transaction failed (ReadyForQuery's 'E'): an error aborted it, and
     * every statement up to its end gets 25P02.
     */
    boolean transactionFailed() {
        if (client == null) {
            return false;
        }
        try {
            return "FAILED".equals(String.valueOf(transactionStatus.invoke(client)));
        } catch (ReflectiveOperationException | RuntimeException unreadable) {
            return false;
        }
    }
}
