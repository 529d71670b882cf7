package io.lockhygiene.internal.session;

import io.lockhygiene.internal.log.Log;
import io.lockhygiene.settings.Settings;

/**
 * Whether one connection reaches PostgreSQL through a transaction pooler, for every front end: known without asking
 * ({@code lockhygiene.poolMode}, which the default sets to session for a route it found direct, or the front end's
 * own reason), or detected once from what the server says (the backend pid the driver was announced at start-up,
 * BackendKeyData, differs from {@code pg_backend_pid()} when a pooler is in between). Each front end only asks the
 * server its way (pgjdbc at once, r2dbc-postgresql as a chain) and hands the two pids here.
 *
 * <p>Until it is known every reader assumes a pooler ({@link #assumed()}): detection can fail (inside an aborted
 * transaction) and is then tried again later, and a transaction end read as unpooled in the meantime would go
 * unwatched. One connection's, used by one operation at a time; the answer is volatile because a close may read it
 * from another thread.
 */
public final class TransactionPooling {
    /** What the server says its backend is (a pooler's server differs from the one the driver was announced). */
    public static final String BACKEND_PID_QUERY = "SELECT pg_catalog.pg_backend_pid()";

    private final String id;
    private volatile Boolean answer;

    /**
     * @param settings the connection's ({@code poolMode})
     * @param pooledOnEveryRoute the front end knows the answer is "a pooler" whatever the route (JDBC: emulate chosen
     *                           by name on connections a pool lends to any thread, whose pool is the pooler; R2DBC:
     *                           emulate with a holder, whose locks are the owner's wherever it connects)
     */
    public TransactionPooling(Settings settings, String id, boolean pooledOnEveryRoute) {
        this.id = id;
        if (pooledOnEveryRoute) {
            answer = Boolean.TRUE;
        } else if (settings.poolMode() == Settings.PoolMode.TRANSACTION) {
            answer = Boolean.TRUE;
        } else if (settings.poolMode() == Settings.PoolMode.SESSION) {
            answer = Boolean.FALSE;
        }
    }

    /** The answer, or null while the server must be asked ({@link #detected}). */
    public Boolean known() {
        return answer;
    }

    /** What {@link #known()} answers without asking: a pooler unless known otherwise. */
    public boolean assumed() {
        return !Boolean.FALSE.equals(answer);
    }

    /**
     * The server answered: {@code announcedPid} (BackendKeyData; null when the driver does not show it) against
     * {@code backendPid} ({@link #BACKEND_PID_QUERY}). An announced pid that cannot be read counts as a pooler, the
     * stricter answer, and is kept ({@code lockhygiene.poolMode=session} says otherwise).
     */
    public boolean detected(Integer announcedPid, int backendPid) {
        boolean pooler = announcedPid == null || announcedPid != backendPid;
        Log.debug("LockHygiene: {} {}", id, announcedPid == null
                ? "cannot read the backend pid its driver was given; treated as transaction pooling"
                        + " (lockhygiene.poolMode=session if it is not)"
                : pooler ? "reaches PostgreSQL through a pooler: treated as transaction pooling"
                        + " (lockhygiene.poolMode=session if it is not)"
                : "is connected directly");
        answer = pooler;
        return pooler;
    }

    /**
     * The server could not be asked ({@code why}: e.g. inside an aborted transaction, where the application's own
     * statement will fail with the real reason): a pooler for now, asked again next time.
     */
    public boolean undetected(Object why) {
        Log.debug("LockHygiene: {} could not tell whether a pooler is in between ({}); assuming one", id, why);
        return true;
    }
}
