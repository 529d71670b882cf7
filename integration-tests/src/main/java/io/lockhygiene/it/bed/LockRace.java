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
 * directly on PostgreSQL, takes it and draws the next row id. Whatever A inserts after that and commits was done
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

    /**
     * What B saw once it held the key: the next id of {@code lost_rows} (a row A inserted after that has a larger
     * one: ids come from one sequence, in the order the inserts ran) and its snapshot (what was committed then).
     */
    public record Taken(long nextId, String snapshot) {
    }

    /** B: waits for {@code key} directly on PostgreSQL; once granted, what it saw then. */
    public CompletableFuture<Taken> workerB(long key, CountDownLatch waiting) {
        return CompletableFuture.supplyAsync(() -> {
            try (Connection b = bed.connect(Route.DIRECT); Statement s = b.createStatement()) {
                s.execute("SET statement_timeout = '60s'");
                waiting.countDown();
                s.execute("SELECT pg_advisory_lock(" + key + ")");
                try (ResultSet rs = s.executeQuery("SELECT nextval(pg_get_serial_sequence('lost_rows', 'id')),"
                        + " pg_current_snapshot()::text")) {
                    rs.next();
                    Taken taken = new Taken(rs.getLong(1), rs.getString(2));
                    s.execute("SELECT pg_advisory_unlock(" + key + ")");
                    return taken;
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
     * Rows of run {@code run} that A inserted after B held the key (their ids come after the one B drew then) and
     * committed: work A began without the lock. A fence lets none through: the fence runs after the insert in the
     * same transaction, so after B's grant, when the holder's session that held the key is gone with its seal
     * (the seal, in the lock table's first partition, goes before any key). Counted by id, not by transaction id:
     * a snapshot's xmax is the last completed transaction's id + 1, so a transaction already running when B took
     * its snapshot, whose id was at or above that, is neither visible in it nor listed as in progress, and would
     * pass for one begun after it.
     */
    public int committedAfter(String run, Taken taken) throws SQLException {
        return count("count(*)", run, "id > ?", taken.nextId(), null);
    }

    /**
     * Rows of run {@code run} inserted before B held the key that B's snapshot did not see: a commit already on its
     * way when the holder's session went, whose fence check ran before the session's exit released the key (the
     * window emulate documents: the server's time between the check and the commit). Counted in transactions: A's
     * one writer has at most one such transaction.
     */
    public int inFlightAt(String run, Taken taken) throws SQLException {
        return count("count(DISTINCT xmin::text)", run, "id < ? AND NOT pg_visible_in_snapshot(xmin::text::xid8,"
                + " ?::pg_snapshot)", taken.nextId(), taken.snapshot());
    }

    private int count(String what, String run, String condition, long id, String snapshot) throws SQLException {
        try (Connection c = bed.connect(Route.DIRECT); PreparedStatement ps = c.prepareStatement("SELECT " + what
                + " FROM lost_rows WHERE run = ? AND " + condition)) {
            ps.setString(1, run);
            ps.setLong(2, id);
            if (snapshot != null) {
                ps.setString(3, snapshot);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }
}
