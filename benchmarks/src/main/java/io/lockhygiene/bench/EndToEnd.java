package io.lockhygiene.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.demo.Client;

/** pgbench-like small transactions, T threads, one client kind, for a fixed time. */
final class EndToEnd {
    static final int ACCOUNTS = 10_000;

    static void schema(TestBed bed) throws SQLException {
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS bench_accounts");
            s.execute("CREATE TABLE bench_accounts (aid int PRIMARY KEY, abalance bigint NOT NULL DEFAULT 0, filler text)");
            s.execute("INSERT INTO bench_accounts SELECT g, 0, repeat('x', 80) FROM generate_series(1, " + ACCOUNTS + ") g");
            s.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
        }
    }

    /** Results of one run: transactions and per-transaction latencies in nanoseconds. */
    static final class Result {
        long transactions;
        long nanos;
        long[] latencies = new long[0];
        int errors;

        void add(Result r) {
            transactions += r.transactions;
            nanos += r.nanos;
            errors += r.errors;
            long[] merged = Arrays.copyOf(latencies, latencies.length + r.latencies.length);
            System.arraycopy(r.latencies, 0, merged, latencies.length, r.latencies.length);
            latencies = merged;
        }

        double tps() {
            return transactions / (nanos / 1e9);
        }

        double percentileMicros(double p) {
            long[] s = latencies.clone();
            Arrays.sort(s);
            return s.length == 0 ? 0 : s[(int) Math.min(s.length - 1, Math.floor(p * s.length))] / 1000.0;
        }
    }

    static Result run(TestBed bed, Route route, Client client, int threads, long millis) throws Exception {
        return run(bed, route, client, threads, millis, false);
    }

    /** @param autocommit the same two statements, each its own transaction (no commit()) */
    static Result run(TestBed bed, Route route, Client client, int threads, long millis, boolean autocommit)
            throws Exception {
        List<Thread> workers = new ArrayList<>();
        List<long[]> lat = new ArrayList<>();
        long[] counts = new long[threads];
        int[] errors = new int[threads];
        long start = System.nanoTime();
        long deadline = start + millis * 1_000_000L;
        for (int t = 0; t < threads; t++) {
            int id = t;
            long[] mine = new long[2_000_000];
            lat.add(mine);
            Thread w = new Thread(() -> {
                try (Connection c = client.open(bed, route);
                     PreparedStatement select = c.prepareStatement("SELECT abalance FROM bench_accounts WHERE aid = ?");
                     PreparedStatement update = c.prepareStatement("UPDATE bench_accounts SET abalance = abalance + ? WHERE aid = ?")) {
                    c.setAutoCommit(autocommit);
                    ThreadLocalRandom r = ThreadLocalRandom.current();
                    while (System.nanoTime() < deadline && counts[id] < mine.length) {
                        long t0 = System.nanoTime();
                        int aid = 1 + r.nextInt(ACCOUNTS);
                        select.setInt(1, aid);
                        try (ResultSet rs = select.executeQuery()) {
                            rs.next();
                        }
                        update.setInt(1, r.nextInt(-5000, 5000));
                        update.setInt(2, aid);
                        update.executeUpdate();
                        if (!autocommit) {
                            c.commit();
                        }
                        mine[(int) counts[id]++] = System.nanoTime() - t0;
                    }
                } catch (SQLException e) {
                    errors[id]++;
                }
            });
            workers.add(w);
            w.start();
        }
        for (Thread w : workers) {
            w.join();
        }
        Result res = new Result();
        res.nanos = System.nanoTime() - start;
        int total = 0;
        for (long c : counts) {
            total += (int) c;
        }
        res.latencies = new long[total];
        int k = 0;
        for (int t = 0; t < threads; t++) {
            System.arraycopy(lat.get(t), 0, res.latencies, k, (int) counts[t]);
            k += (int) counts[t];
            res.errors += errors[t];
        }
        res.transactions = total;
        return res;
    }
}
