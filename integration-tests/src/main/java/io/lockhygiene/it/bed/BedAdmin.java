package io.lockhygiene.it.bed;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/** Looks at the bed's server from outside, over a direct connection: who holds which advisory lock. */
public final class BedAdmin {
    private final TestBed bed;

    BedAdmin(TestBed bed) {
        this.bed = bed;
    }

    /** A granted advisory lock as pg_locks shows it. */
    public record HeldLock(int pid, long key, String mode) {
    }

    /** Backends that hold the single-bigint-key advisory lock {@code key} (granted only). */
    public List<Integer> holdersOf(long key) throws SQLException {
        List<Integer> pids = new ArrayList<>();
        for (HeldLock l : heldAdvisoryLocks()) {
            if (l.key() == key) {
                pids.add(l.pid());
            }
        }
        return pids;
    }

    /** Every granted advisory lock on the server but lock holders' seals, with bigint keys rebuilt from classid/objid. */
    public List<HeldLock> heldAdvisoryLocks() throws SQLException {
        // lock holders' seals (their own two-int lock per session) are no application's locks
        String sql = "SELECT pid, classid::bigint, objid::bigint, objsubid, mode FROM pg_locks"
                + " WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()"
                + " AND NOT (objsubid = 2 AND classid::bigint = " + io.lockhygiene.internal.sql.Seals.CLASSID + ")";
        List<HeldLock> locks = new ArrayList<>();
        try (Connection c = bed.connect(Route.DIRECT);
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) {
                long key = rs.getInt(4) == 1 ? (rs.getLong(2) << 32) | rs.getLong(3) : -1;
                locks.add(new HeldLock(rs.getInt(1), key, rs.getString(5)));
            }
        }
        return locks;
    }

    /**
     * Terminates every backend that holds an advisory lock with this key, so the next scenario starts
     * clean. PgBouncer notices the closed server and replaces it.
     */
    public int terminateHoldersOf(long key) throws SQLException {
        int n = 0;
        try (Connection c = bed.connect(Route.DIRECT);
             PreparedStatement ps = c.prepareStatement("SELECT pg_terminate_backend(?)")) {
            for (int pid : holdersOf(key)) {
                ps.setInt(1, pid);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    n += rs.getBoolean(1) ? 1 : 0;
                }
            }
        }
        return n;
    }

    /** Waits until no backend holds {@code key}; returns the holders still there at the deadline. */
    public List<Integer> awaitReleased(long key, long maxWaitMillis) throws SQLException, InterruptedException {
        long deadline = System.currentTimeMillis() + maxWaitMillis;
        List<Integer> holders = holdersOf(key);
        while (!holders.isEmpty() && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
            holders = holdersOf(key);
        }
        return holders;
    }

    /** Backends of our database idle inside a transaction (a lock holder pins one while it holds a lock). */
    public int idleInTransaction() throws SQLException {
        return countSessions("state LIKE 'idle in transaction%'");
    }

    /** Of those, the ones that keep a snapshot (backend_xmin): CREATE INDEX CONCURRENTLY waits for them. */
    public int idleInTransactionWithSnapshot() throws SQLException {
        return countSessions("state = 'idle in transaction' AND backend_xmin IS NOT NULL");
    }

    private int countSessions(String condition) throws SQLException {
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                     + " AND " + condition + " AND pid <> pg_backend_pid()")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    /** The application_name of each backend that holds the single-bigint-key advisory lock {@code key}. */
    public List<String> applicationNamesHolding(long key) throws SQLException {
        List<String> names = new ArrayList<>();
        try (Connection c = bed.connect(Route.DIRECT);
             PreparedStatement ps = c.prepareStatement("SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a"
                     + " ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
                     + " AND ((l.classid::bigint << 32) | l.objid::bigint) = ?")) {
            ps.setLong(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    names.add(rs.getString(1));
                }
            }
        }
        return names;
    }

    /** Sessions of our database with this application_name (a lock holder's: "lockhygiene lock holder"). */
    public int sessionsNamed(String applicationName) throws SQLException {
        try (Connection c = bed.connect(Route.DIRECT);
             PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE datname ="
                     + " current_database() AND application_name = ? AND pid <> pg_backend_pid()")) {
            ps.setString(1, applicationName);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /** Terminates every backend of our database with this application_name; returns how many. */
    public int terminateSessionsNamed(String applicationName) throws SQLException {
        try (Connection c = bed.connect(Route.DIRECT);
             PreparedStatement ps = c.prepareStatement("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                     + " WHERE datname = current_database() AND application_name = ? AND pid <> pg_backend_pid()")) {
            ps.setString(1, applicationName);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /** The client port of backend {@code pid}'s connection (its peer's side), as the server sees it. */
    public int clientPortOf(int pid) throws SQLException {
        try (Connection c = bed.connect(Route.DIRECT);
             PreparedStatement ps = c.prepareStatement("SELECT client_port FROM pg_stat_activity WHERE pid = ?")) {
            ps.setInt(1, pid);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("no backend " + pid);
                }
                return rs.getInt(1);
            }
        }
    }

    /** Backends waiting (not granted) for the single-bigint-key advisory lock {@code key}. */
    public List<Integer> waitersFor(long key) throws SQLException {
        List<Integer> pids = new ArrayList<>();
        try (Connection c = bed.connect(Route.DIRECT);
             PreparedStatement ps = c.prepareStatement("SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT"
                     + " granted AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = ?")) {
            ps.setLong(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    pids.add(rs.getInt(1));
                }
            }
        }
        return pids;
    }

    /**
     * Waits until backend {@code pid} holds no lock and is off the server ({@code pg_terminate_backend} returns
     * before the backend has let go of its locks); true when it is gone by the deadline.
     */
    public boolean awaitGone(int pid, long maxWaitMillis) throws SQLException, InterruptedException {
        long deadline = System.currentTimeMillis() + maxWaitMillis;
        try (Connection c = bed.connect(Route.DIRECT);
             PreparedStatement ps = c.prepareStatement("SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = ?)"
                     + " OR EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = ?)")) {
            ps.setInt(1, pid);
            ps.setInt(2, pid);
            while (true) {
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    if (!rs.getBoolean(1)) {
                        return true;
                    }
                }
                if (System.currentTimeMillis() >= deadline) {
                    return false;
                }
                Thread.sleep(20);
            }
        }
    }

    /** True while backend {@code pid} is on the server. */
    public boolean backendExists(int pid) throws SQLException {
        try (Connection c = bed.connect(Route.DIRECT);
             PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE pid = ?")) {
            ps.setInt(1, pid);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1) > 0;
            }
        }
    }

    /**
     * Puts every server of a transaction pool back to the role's settings: a session-level SET sent through a
     * transaction pooler in autocommit stays on whichever server ran it (the hazard the README describes), and a
     * test that does so must not leave it to the next. Holds one transaction per pool server at once (so each gets
     * its own server), RESET ALL in each, then commits them.
     */
    public void resetTransactionPoolServers(Route route) throws SQLException {
        List<Connection> held = new ArrayList<>();
        try {
            for (int i = 0; i < PgBouncerConfig.TRANSACTION_POOL_SIZE; i++) {
                Connection c = bed.connect(route);
                held.add(c);
                c.setAutoCommit(false);
                try (java.sql.Statement s = c.createStatement()) {
                    s.execute("RESET ALL");
                }
            }
            for (Connection c : held) {
                c.commit();
            }
        } finally {
            for (Connection c : held) {
                c.close();
            }
        }
    }
}
