package io.lockhygiene.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;

import static io.lockhygiene.bench.Report.JSON;
import static io.lockhygiene.bench.Report.MD;
import static io.lockhygiene.bench.Workers.perSecond;

/** Section 4's commit fence (issue 33): fenced against unfenced jobs, lockless workers, the fence's window. */
final class FenceSection {

    /**
     * What the commit fence costs (issue 33): own-key workers whose job runs its statements on the connection that
     * holds the lock (every autocommit statement, or the transaction's COMMIT, carries the fence) against the
     * same job with its statements on a second connection of the worker that holds nothing (no fence; the same
     * round trips otherwise), interleaved; workers without locks under emulate against plain pgjdbc; and the
     * window between the fence's check and the end of the commit, as the server's clock sees it.
     */
    static void fence(TestBed bed, boolean full) throws Exception {
        int jobs = full ? 200 : 60;
        int rounds = full ? 5 : 3;
        MD.append("\n| commit fence, 8 own-key workers, ").append(jobs).append(" jobs of 5 statements each,"
                + " 3-server pool | fenced jobs/s | unfenced jobs/s | ratio |\n|---|---|---|---|\n");
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS fence_rows (id int PRIMARY KEY, n bigint NOT NULL DEFAULT 0)");
            s.execute("INSERT INTO fence_rows (id) SELECT g FROM generate_series(0, 7) g ON CONFLICT DO NOTHING");
        }
        String[][] shapes = {{"SELECT ?::int", "5 x SELECT ?::int"},
                {"UPDATE fence_rows SET n = n + 1 WHERE id = ?", "5 x UPDATE of the worker's row"}};
        for (String[] shape : shapes) {
            for (boolean transactions : new boolean[] {false, true}) {
                double fenced = 0;
                double unfenced = 0;
                for (int r = 0; r < rounds; r++) {
                    fenced += fencedJobsPerSecond(bed, jobs, 889_000 + r * 10, true, transactions, shape[0]);
                    unfenced += fencedJobsPerSecond(bed, jobs, 889_500 + r * 10, false, transactions, shape[0]);
                }
                MD.append(String.format(Locale.ROOT, "| %s, %s | %.1f | %.1f | %.2f |%n", shape[1], transactions
                        ? "a transaction per job (the fence rides with COMMIT)" : "autocommit (each statement carries the fence)",
                        fenced / rounds, unfenced / rounds, fenced / unfenced));
                JSON.put("fence." + (shape[0].startsWith("UPDATE") ? "update." : "select.")
                        + (transactions ? "transaction" : "autocommit") + ".ratio", fenced / unfenced);
            }
        }
        double plain = 0;
        double emulate = 0;
        for (int r = 0; r < rounds; r++) {
            plain += lockless(bed, jobs, false);
            emulate += lockless(bed, jobs, true);
        }
        MD.append(String.format(Locale.ROOT, "| workers holding no lock: emulate against plain pgjdbc | %.1f | %.1f | %.2f |%n",
                emulate / rounds, plain / rounds, emulate / plain));
        JSON.put("fence.lockless.ratio", emulate / plain);
        long[] window = fenceWindow(bed, full ? 2000 : 500);
        MD.append(String.format(Locale.ROOT, "%nThe fence's window (the server's clock from the fence's check to the end of"
                + " its COMMIT, in one round trip): p50 %d µs, p99 %d µs.%n%n", window[0], window[1]));
        JSON.put("fence.windowP50us", window[0]);
        JSON.put("fence.windowP99us", window[1]);
    }

    /** Jobs per second of 8 own-key workers: lock, 5 statements (on the lock's connection, or another), unlock. */
    private static double fencedJobsPerSecond(TestBed bed, int jobs, long key, boolean fenced, boolean transactions,
                                              String statement) throws Exception {
        return perSecond(8, (w, start, done) -> {
            long k = key + w;
            try (Connection lock = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
                 Connection other = fenced ? null : bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
                 Statement ls = lock.createStatement();
                 PreparedStatement work = (fenced ? lock : other).prepareStatement(statement)) {
                Connection worker = fenced ? lock : other;
                start.await();
                for (int i = 0; i < jobs; i++) {
                    ls.execute("SELECT pg_advisory_lock(" + k + ")");
                    if (transactions) {
                        worker.setAutoCommit(false);
                    }
                    for (int j = 0; j < 5; j++) {
                        work.setInt(1, statement.startsWith("UPDATE") ? w : j);
                        work.execute();
                    }
                    if (transactions) {
                        worker.commit();
                        worker.setAutoCommit(true);
                    }
                    ls.execute("SELECT pg_advisory_unlock(" + k + ")");
                    done.incrementAndGet();
                }
            }
        });
    }

    /** Jobs per second of 8 workers running 5 statements per job and no lock at all. */
    private static double lockless(TestBed bed, int jobs, boolean emulate) throws Exception {
        return perSecond(8, (w, start, done) -> {
            try (Connection c = emulate ? bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate")
                    : bed.connect(Route.TRANSACTION_POOL); PreparedStatement work = c.prepareStatement("SELECT ?::int")) {
                start.await();
                for (int i = 0; i < jobs; i++) {
                    for (int j = 0; j < 5; j++) {
                        work.setInt(1, j);
                        work.execute();
                    }
                    done.incrementAndGet();
                }
            }
        });
    }


    /** p50 and p99 µs, by the server's clock, from a fence's check to the end of the COMMIT it goes with. */
    private static long[] fenceWindow(TestBed bed, int rounds) throws SQLException {
        long[] w = new long[rounds];
        int seal = 1; // a key nobody holds here stands for a live holder's seal (the try fails only if held: same work)
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement();
             Connection h = bed.connect(Route.DIRECT); Statement hs = h.createStatement()) {
            hs.execute("SELECT pg_advisory_lock(" + io.lockhygiene.internal.sql.Seals.CLASSID + ", " + seal + ")");
            c.setAutoCommit(false);
            for (int i = 0; i < rounds; i++) {
                s.execute("SELECT 1"); // the transaction's work
                // the fence's own statement, with the server's clock read just before its check
                s.execute(io.lockhygiene.internal.sql.Seals.fence(new int[] {seal}).replace("SELECT CASE",
                        "SELECT (extract(epoch from clock_timestamp()) * 1e6)::bigint, CASE")
                        + "; COMMIT; SELECT (extract(epoch from clock_timestamp()) * 1e6)::bigint");
                long before;
                try (ResultSet rs = s.getResultSet()) {
                    rs.next();
                    before = rs.getLong(1);
                }
                s.getMoreResults();
                s.getMoreResults();
                try (ResultSet rs = s.getResultSet()) {
                    rs.next();
                    w[i] = rs.getLong(1) - before;
                }
            }
            c.setAutoCommit(true);
        }
        java.util.Arrays.sort(w);
        return new long[] {w[rounds / 2], w[(int) (rounds * 0.99)]};
    }

    private FenceSection() {
    }
}
