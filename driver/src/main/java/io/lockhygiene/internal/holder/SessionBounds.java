package io.lockhygiene.internal.holder;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;

import io.lockhygiene.internal.pgjdbc.Pgjdbc;

/**
 * The bounds PostgreSQL puts on a statement's lock wait in the application's own session, as that session's
 * server reports them ({@code SHOW}): {@code lock_timeout} (each lock acquisition; 55P03) and
 * {@code statement_timeout} (the whole statement; 57014). Wherever they came from (SET, SET LOCAL, set_config,
 * RESET, role or database defaults, the startup options) the server's answer says what applies now. Asked only
 * when an emulated lock must wait: an uncontended lock, a try and every other statement never ask.
 */
public final class SessionBounds {
    /** Where the bounds are read: the application's own session, for the statement that waits now. */
    @FunctionalInterface
    public interface Source {
        SessionBounds read() throws SQLException;
    }

    /** The query a front end sends on the application's session: two utility statements, no snapshot taken. */
    public static final String QUERY = "SHOW lock_timeout; SHOW statement_timeout";

    /**
     * A JDBC connection's own bounds, as its server shows them now: SHOW with the simple protocol (no
     * snapshot), and no BEGIN (a transaction pgjdbc has not opened yet has no SET LOCAL either, and opening it
     * would pin a pooled server for the whole wait).
     */
    public static SessionBounds readOn(Connection raw) throws SQLException {
        try (Statement s = raw.createStatement()) {
            boolean rows = Pgjdbc.executeSimpleWithoutBegin(s, SessionBounds.QUERY);
            String[] shown = new String[2];
            for (int i = 0; i < 2; i++) {
                if (!rows) {
                    throw new SQLException("LockHygiene: SHOW gave no row for the session's bounds", "XX000");
                }
                try (ResultSet rs = s.getResultSet()) {
                    shown[i] = rs.next() ? rs.getString(1) : null;
                }
                rows = s.getMoreResults();
            }
            return of(shown[0], shown[1]);
        }
    }

    /** No bound (PostgreSQL's defaults). */
    public static final SessionBounds NONE = new SessionBounds(0, 0);

    private final long lockTimeoutMillis;
    private final long statementTimeoutMillis;

    private SessionBounds(long lockTimeoutMillis, long statementTimeoutMillis) {
        this.lockTimeoutMillis = lockTimeoutMillis;
        this.statementTimeoutMillis = statementTimeoutMillis;
    }

    /** From the two SHOW answers ("300ms", "1s", "5min", "0"). */
    public static SessionBounds of(String lockTimeout, String statementTimeout) throws SQLException {
        return new SessionBounds(millis("lock_timeout", lockTimeout), millis("statement_timeout", statementTimeout));
    }

    /** 0 for none. */
    public long lockTimeoutMillis() {
        return lockTimeoutMillis;
    }

    /** 0 for none. */
    public long statementTimeoutMillis() {
        return statementTimeoutMillis;
    }

    /**
     * A time setting as SHOW prints it: an integer and the largest unit that divides it exactly (PostgreSQL's
     * units for a setting in milliseconds: ms, s, min, h, d), or a bare integer in milliseconds.
     */
    static long millis(String name, String shown) throws SQLException {
        if (shown == null) {
            throw new SQLException("LockHygiene: the server gave no value for " + name, "XX000");
        }
        String s = shown.trim().toLowerCase(Locale.ROOT);
        int i = 0;
        while (i < s.length() && (Character.isDigit(s.charAt(i)) || (i == 0 && s.charAt(i) == '-'))) {
            i++;
        }
        long n;
        try {
            n = Long.parseLong(s.substring(0, i));
        } catch (NumberFormatException e) {
            throw new SQLException("LockHygiene: cannot read " + name + " = '" + shown + "' as the server showed it",
                    "XX000", e);
        }
        long unit;
        switch (s.substring(i).trim()) {
            case "":
            case "ms":
                unit = 1;
                break;
            case "s":
                unit = 1000;
                break;
            case "min":
                unit = 60_000;
                break;
            case "h":
                unit = 3_600_000;
                break;
            case "d":
                unit = 86_400_000;
                break;
            default:
                throw new SQLException("LockHygiene: cannot read " + name + " = '" + shown + "' as the server"
                        + " showed it", "XX000");
        }
        return n <= 0 ? 0 : n * unit;
    }

    @Override
    public String toString() {
        return "lock_timeout " + lockTimeoutMillis + " ms, statement_timeout " + statementTimeoutMillis + " ms";
    }
}
