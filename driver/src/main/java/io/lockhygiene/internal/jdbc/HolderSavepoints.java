package io.lockhygiene.internal.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * Mirrors the application's transaction and its savepoints onto the lock holder's transaction, for the
 * xact-level locks the holder takes on the application's behalf: a savepoint marks where the
 * application's transaction starts on the holder, and one more marks each application savepoint set after
 * it. Rolling back to a mirror releases exactly the xact locks taken after the application's savepoint
 * (session locks survive, as in PostgreSQL); releasing one forgets it. Not thread-safe: the holder's.
 */
final class HolderSavepoints {
    static final String APPLICATION_TRANSACTION = "lockhygiene_app_tx";

    /** The application's savepoint (its name, or its JDBC Savepoint object) and the holder's mirror. */
    private static final class Mirror {
        final Object application;
        final String holder;

        Mirror(Object application, String holder) {
            this.application = application;
            this.holder = holder;
        }
    }

    private final List<Mirror> mirrors = new ArrayList<>();
    private boolean active;
    private int sequence;

    /** True while the holder marks an application transaction (it took xact locks for it). */
    boolean active() {
        return active;
    }

    /** Marks the start of the application's transaction on the holder, once per transaction. */
    void begin(Connection holder) throws SQLException {
        if (!active) {
            Pgjdbc.executeSimple(holder, "SAVEPOINT " + APPLICATION_TRANSACTION);
            active = true;
        }
    }

    /** The holder's transaction ended (commit, rollback, loss): nothing is marked any more. */
    void reset() {
        active = false;
        mirrors.clear();
    }

    /** The application set a savepoint: mirror it if the holder marks its transaction. */
    void savepoint(Connection holder, Object application) throws SQLException {
        if (!active) {
            return; // nothing of this transaction on the holder yet: a later rollback to it undoes it all
        }
        String name = "lockhygiene_sp_" + (++sequence);
        Pgjdbc.executeSimple(holder, "SAVEPOINT " + name);
        mirrors.add(new Mirror(application, name));
    }

    /** The application rolled back to a savepoint: so does the holder, to its mirror (or to the start). */
    void rollbackTo(Connection holder, Object application) throws SQLException {
        if (!active) {
            return;
        }
        int i = indexOf(application);
        String target = i < 0 ? APPLICATION_TRANSACTION : mirrors.get(i).holder;
        Pgjdbc.executeSimple(holder, "ROLLBACK TO SAVEPOINT " + target);
        mirrors.subList(i + 1, mirrors.size()).clear(); // later savepoints are gone, this one stays
    }

    /** The application released a savepoint: the mirror and the later ones go. */
    void release(Connection holder, Object application) throws SQLException {
        int i = indexOf(application);
        if (!active || i < 0) {
            return;
        }
        Pgjdbc.executeSimple(holder, "RELEASE SAVEPOINT " + mirrors.get(i).holder);
        mirrors.subList(i, mirrors.size()).clear();
    }

    /**
     * A statement of the application failed: PostgreSQL aborts the innermost (sub)transaction at once,
     * releasing the locks taken in it; the enclosing levels keep theirs until ROLLBACK [TO]. So the holder
     * rolls back to its innermost mirror, which stays for the application's own ROLLBACK TO.
     */
    void abortInnermost(Connection holder) throws SQLException {
        if (!active) {
            return;
        }
        String target = mirrors.isEmpty() ? APPLICATION_TRANSACTION : mirrors.get(mirrors.size() - 1).holder;
        Pgjdbc.executeSimple(holder, "ROLLBACK TO SAVEPOINT " + target);
    }

    /** The application's transaction ended: its xact locks on the holder go, its session locks stay. */
    void end(Connection holder) throws SQLException {
        if (!active) {
            return;
        }
        reset();
        Pgjdbc.executeSimple(holder, "ROLLBACK TO SAVEPOINT " + APPLICATION_TRANSACTION + "; RELEASE SAVEPOINT "
                + APPLICATION_TRANSACTION);
    }

    private int indexOf(Object application) {
        for (int i = mirrors.size() - 1; i >= 0; i--) {
            if (mirrors.get(i).application.equals(application)) {
                return i;
            }
        }
        return -1;
    }
}
