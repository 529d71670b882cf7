package io.lockhygiene.it.bed;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;

/**
 * The lost-lock race of the fence tests (issue 33), for every front end: worker A writes rows of its run into
 * {@code lost_rows} under a session lock; its lock's session is terminated; worker B, waiting for the key
 * directly on PostgreSQL, takes it and notes its snapshot. Whatever A commits after that snapshot committed
 * without the lock: a front end that fences A's commits leaves none.
 */
public final class LockRace {
    private final TestBed bed;

    public LockRace(TestBed bed) {
        this.bed = bed;
    }

    /** The table A writes into. */
    public void createTable() throws SQLException {
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS lost_rows (id bigserial PRIMARY KEY, run text NOT NULL, worker text NOT NULL)");
        }
    }

    /** B: waits for {@code key} directly on PostgreSQL; once granted, the snapshot that says what was committed then. */
    public CompletableFuture<String> workerB(long key, CountDownLatch waiting) {
        return CompletableFuture.supplyAsync(() -> {
            try (Connection b = bed.connect(Route.DIRECT); Statement s = b.createStatement()) {
                s.execute("SET statement_timeout = '60s'");
                waiting.countDown();
                s.execute("SELECT pg_advisory_lock(" + key + ")");
                try (ResultSet rs = s.executeQuery("SELECT pg_current_snapshot()::text")) {
                    rs.next();
                    String snapshot = rs.getString(1);
                    s.execute("SELECT pg_advisory_unlock(" + key + ")");
                    return snapshot;
                }
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /** Returns once run {@code run} has committed {@code rows} rows. */
    public void awaitRowsOf(String run, int rows) {
        Eventually.until(rows + " rows of A committed", Duration.ofSeconds(30), () -> rowsOf(run) >= rows);
    }

    /** Rows run {@code run} has committed. */
    public int rowsOf(String run) throws SQLException {
        try (Connection c = bed.connect(Route.DIRECT);
             PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM lost_rows WHERE run = ?")) {
            ps.setString(1, run);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /** Returns once a backend waits in PostgreSQL's queue for {@code key} (B). */
    public void awaitWaiterFor(long key) {
        Eventually.until("B waits for key " + key + " in pg_locks", Duration.ofSeconds(30),
                () -> !bed.admin().waitersFor(key).isEmpty());
    }

    /** Terminates the one backend that holds {@code key} (A's own, a pooled server, or A's lock holder); when. */
    public long terminateHolderOf(long key) throws SQLException {
        List<Integer> holders = bed.admin().holdersOf(key);
        if (holders.size() != 1) {
            throw new AssertionError("one session holds A's lock: " + holders);
        }
        long at = System.currentTimeMillis();
        try (Connection admin = bed.connect(Route.DIRECT); Statement s = admin.createStatement()) {
            s.execute("SELECT pg_terminate_backend(" + holders.get(0) + ")");
        }
        return at;
    }

    /**
     * Rows of run {@code run} committed after B's {@code snapshot} by a transaction that had not begun when B took it
     * (its id is not among the snapshot's in-progress ones): work A began after B held the key and committed without
     * the lock. A fence lets none through: any check A makes after the loss fails, since the holder's session that
     * held the key held the seal too, and both went at its exit.
     */
    public int committedAfter(String run, String snapshot) throws SQLException {
        return count("count(*)", run, snapshot, "NOT");
    }

    /**
     * Rows of run {@code run} that B's {@code snapshot} missed because their transaction was in progress at it and
     * committed later: a commit already on its way when the holder's session went, whose fence check ran before the
     * session's exit released the key (the window emulate documents: the server's time between the check and the
     * commit). Counted in transactions: A's one writer has at most one such transaction.
     */
    public int inFlightAt(String run, String snapshot) throws SQLException {
        return count("count(DISTINCT xmin::text)", run, snapshot, "");
    }

    private int count(String what, String run, String snapshot, String inProgress) throws SQLException {
        try (Connection c = bed.connect(Route.DIRECT); PreparedStatement ps = c.prepareStatement("SELECT " + what
                + " FROM lost_rows WHERE run = ? AND NOT pg_visible_in_snapshot(xmin::text::xid8, ?::pg_snapshot)"
                + " AND " + inProgress + " (xmin::text::xid8 = ANY (SELECT pg_catalog.pg_snapshot_xip(?::pg_snapshot)))")) {
            ps.setString(1, run);
            ps.setString(2, snapshot);
            ps.setString(3, snapshot);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }
}
