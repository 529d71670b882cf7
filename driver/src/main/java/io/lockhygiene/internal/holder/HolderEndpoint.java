package io.lockhygiene.internal.holder;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Where one lock holder's connections go, and how they behave there. On a {@linkplain #dedicated()
 * dedicated} endpoint (the server itself, or a PgBouncer entry in session mode) a holder connection is a
 * session of its own: session locks live there without a transaction, blocking calls wait in PostgreSQL's
 * queue on connections of their own, and nothing of the application's pool is used. Through the
 * application's own route (a transaction pooler) the holder keeps a transaction open while it holds
 * anything, which pins one pooled server, and waits for other processes by polling.
 */
public final class HolderEndpoint {
    public enum Kind {
        /** The PostgreSQL server itself. */
        DIRECT,
        /** A pooler entry in session mode. */
        SESSION_POOLER,
        /** The application's own route (its transaction pooler, or its DataSource). */
        APPLICATION_ROUTE
    }

    /** Opens one raw pgjdbc connection. */
    @FunctionalInterface
    public interface Opener {
        Connection open() throws SQLException;
    }

    /** Opens one holder link (the seam: pgjdbc in production, a fake server in unit tests). */
    @FunctionalInterface
    public interface LinkOpener {
        HolderLink open() throws SQLException;
    }

    private final Kind kind;
    private final String description;
    private final Object identity;
    private final LinkOpener opener;
    private final int mainSessions;
    private final long lingerMillis;

    private HolderEndpoint(Kind kind, String description, Object identity, LinkOpener opener, int mainSessions,
                           long lingerMillis) {
        this.kind = kind;
        this.description = description;
        this.identity = identity;
        this.opener = opener;
        this.mainSessions = mainSessions;
        this.lingerMillis = lingerMillis;
    }

    /** An endpoint whose pgjdbc connections {@code opener} opens; identities compare equal for one database. */
    public static HolderEndpoint of(Kind kind, String description, Object identity, Opener opener) {
        boolean dedicated = kind != Kind.APPLICATION_ROUTE;
        SealPlacement placement = new SealPlacement();
        return new HolderEndpoint(kind, description, identity,
                () -> JdbcHolderLink.of(opener.open(), dedicated, placement, description), 1,
                io.lockhygiene.settings.Settings.DEFAULT_HOLDER_LINGER_MILLIS);
    }

    /** An endpoint whose links {@code opener} makes (unit tests of the holder without a server). */
    public static HolderEndpoint ofLinks(Kind kind, String description, Object identity, LinkOpener opener) {
        return new HolderEndpoint(kind, description, identity, opener, 1,
                io.lockhygiene.settings.Settings.DEFAULT_HOLDER_LINGER_MILLIS);
    }

    /**
     * The same endpoint, whose holder spreads its keys over {@code n} main sessions (lockhygiene.holderSessions);
     * the application's own route keeps one, whatever is asked: each would pin a server of the application's pool.
     */
    public HolderEndpoint withMainSessions(int n) {
        return new HolderEndpoint(kind, description, identity, opener, dedicated() ? Math.max(1, n) : 1, lingerMillis);
    }

    /** The same endpoint, whose holder closes its sessions after {@code millis} with nothing held or waited for. */
    public HolderEndpoint withLinger(long millis) {
        return new HolderEndpoint(kind, description, identity, opener, mainSessions, Math.max(0, millis));
    }

    /** How long its holder keeps its sessions with nothing held and nothing waited for (lockhygiene.holderLinger). */
    public long lingerMillis() {
        return lingerMillis;
    }

    /** How many main sessions its holder opens at most (each when a key of its share is first taken). */
    public int mainSessions() {
        return mainSessions;
    }

    public Kind kind() {
        return kind;
    }

    /** A session of its own per connection: no pinning transaction, waits in PostgreSQL's queue. */
    public boolean dedicated() {
        return kind != Kind.APPLICATION_ROUTE;
    }

    /** Holders of endpoints with equal identities are one (the same database of the same cluster). */
    public Object identity() {
        return identity;
    }

    /**
     * One more connection of this endpoint, as a holder link. Through a session-mode pooler entry whose servers
     * are all taken, the pooler makes the connect (or its first statement) wait up to its own bound
     * ({@code query_wait_timeout}) and then fails it: that failure comes back as 53300 naming what to raise.
     */
    public HolderLink open() throws SQLException {
        try {
            return opener.open();
        } catch (SQLException e) {
            if (kind == Kind.SESSION_POOLER && poolFull(e)) {
                throw new SQLException(io.lockhygiene.internal.log.EmulateMessages.holderPoolFull(this, e.getMessage()),
                        "53300", e);
            }
            throw e;
        }
    }

    /** PgBouncer's words when no server could be had: its wait ran out, or its limits are reached. */
    public static boolean poolFull(SQLException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            String m = t.getMessage();
            if (m != null && (m.contains("query_wait_timeout") || m.contains("no more connections allowed")
                    || m.contains("pooler error"))) {
                return true;
            }
        }
        return false;
    }

    /** Where it goes, for messages: no credentials. */
    @Override
    public String toString() {
        return description;
    }
}
