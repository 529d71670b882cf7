package io.lockhygiene.bench;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.demo.Client;

import static io.lockhygiene.bench.Report.JSON;
import static io.lockhygiene.bench.Report.MD;

/** Sections 2 and 3: small transactions end to end, interleaved A/B, and what the server executes per transaction. */
final class EndToEndSection {

    static void endToEnd(TestBed bed, boolean full, boolean leakCheckOnly) throws Exception {
        endToEnd(bed, full, leakCheckOnly, false);
    }

    /** @param defaultOnly plain pgjdbc against the default settings alone, through the transaction pooler (issue 45) */
    static void endToEnd(TestBed bed, boolean full, boolean leakCheckOnly, boolean defaultOnly) throws Exception {
        long millis = full ? 10_000 : 2_000;
        int reps = full ? 3 : 2;
        List<Client> clients = leakCheckOnly
                ? List.of(Client.plain(),
                        Client.lockHygiene("detect, tracked, no sample", "lockhygiene.mode=detect", "lockhygiene.leakCheckSample=0"),
                        Client.lockHygiene("detect, tracked + sample 0.005 (default)", "lockhygiene.mode=detect"),
                        Client.lockHygiene("detect, tracked + sample 0.01", "lockhygiene.mode=detect", "lockhygiene.leakCheckSample=0.01"),
                        Client.lockHygiene("detect, leakCheck=always", "lockhygiene.mode=detect", "lockhygiene.leakCheck=always"))
                : defaultOnly ? List.of(Client.plain(), Client.lockHygiene("default settings (emulate)"))
                : List.of(Client.plain(),
                Client.lockHygiene("default settings (emulate)"),
                Client.lockHygiene("detect", "lockhygiene.mode=detect"),
                Client.lockHygiene("detect, leakCheck=always", "lockhygiene.mode=detect", "lockhygiene.leakCheck=always"));
        MD.append("## 2. End to end: small transactions (SELECT + UPDATE + COMMIT), interleaved A/B, ")
                .append(reps).append(" x ").append(millis / 1000).append(" s per cell\n\n")
                .append("| route | threads | client | tx/s | ratio | p50 µs | p50 ratio | p99 µs | p99 ratio | errors |\n")
                .append("|---|---|---|---|---|---|---|---|---|---|\n");
        // leakcheck: the transaction-pool rows again with the two statements in autocommit (each its own
        // transaction, which leakCheck=always wraps to check its end)
        List<Route> routes = leakCheckOnly ? List.of(Route.TRANSACTION_POOL, Route.TRANSACTION_POOL)
                : defaultOnly ? List.of(Route.TRANSACTION_POOL) : List.of(Route.TRANSACTION_POOL, Route.DIRECT);
        for (int ri = 0; ri < routes.size(); ri++) {
            Route route = routes.get(ri);
            boolean autocommit = leakCheckOnly && ri == 1;
            for (int threads : List.of(1, 8, 32)) {
                Map<String, EndToEnd.Result> sum = new LinkedHashMap<>();
                for (int rep = 0; rep < reps; rep++) {
                    for (Client client : clients) {
                        EndToEnd.Result r = EndToEnd.run(bed, route, client, threads, millis, autocommit);
                        sum.computeIfAbsent(client.label(), k -> new EndToEnd.Result()).add(r);
                    }
                }
                EndToEnd.Result base = sum.get("plain pgjdbc");
                for (Map.Entry<String, EndToEnd.Result> e : sum.entrySet()) {
                    EndToEnd.Result r = e.getValue();
                    double ratio = r.tps() / base.tps();
                    MD.append(String.format(Locale.ROOT, "| %s | %d | %s | %.0f | %.3f | %.0f | %.3f | %.0f | %.3f | %d |%n",
                            route.label() + (autocommit ? ", autocommit" : ""), threads, e.getKey(), r.tps(), ratio, r.percentileMicros(0.5),
                            r.percentileMicros(0.5) / base.percentileMicros(0.5), r.percentileMicros(0.99),
                            r.percentileMicros(0.99) / base.percentileMicros(0.99), r.errors));
                    JSON.put("e2e." + route.name() + (autocommit ? ".autocommit" : "") + "." + threads + "." + e.getKey() + ".ratio", ratio);
                }
            }
        }
        MD.append('\n');
    }

    static void serverWork(TestBed bed) throws Exception {
        MD.append("## 3. Statements the server executes per application transaction (pg_stat_statements)\n\n")
                .append("| workload | client | statements per transaction |\n|---|---|---|\n");
        String[][] cases = {
                {"no advisory lock", "plain", ""},
                {"no advisory lock", "lockhygiene default (emulate)", ""},
                {"no advisory lock", "lockhygiene detect", "lockhygiene.mode=detect"},
                {"no advisory lock", "lockhygiene detect, leakCheck=always", "lockhygiene.mode=detect&lockhygiene.leakCheck=always"},
                {"pg_advisory_lock in the transaction", "plain", ""},
                {"pg_advisory_lock in the transaction", "lockhygiene detect", "lockhygiene.mode=detect"},
        };
        for (String[] c : cases) {
            boolean lock = c[0].startsWith("pg_advisory");
            int n = 200;
            resetStats(bed);
            try (Connection conn = "plain".equals(c[1]) ? bed.connect(Route.TRANSACTION_POOL)
                    : bed.connectLockHygiene(Route.TRANSACTION_POOL, c[2].isEmpty() ? new String[0] : new String[] {c[2]});
                 Statement s = conn.createStatement()) {
                conn.setAutoCommit(false);
                for (int i = 0; i < n; i++) {
                    if (lock) {
                        s.execute("SELECT pg_advisory_lock(777000)");
                    }
                    s.execute("SELECT abalance FROM bench_accounts WHERE aid = 1");
                    s.execute("UPDATE bench_accounts SET abalance = abalance + 1 WHERE aid = 1");
                    if (lock) {
                        s.execute("SELECT pg_advisory_unlock(777000)");
                    }
                    conn.commit();
                }
            }
            double per = statements(bed) / (double) n;
            MD.append(String.format(Locale.ROOT, "| %s | %s | %.2f |%n", c[0], c[1], per));
            JSON.put("serverWork." + c[0] + "." + c[1], per);
            bed.admin().terminateHoldersOf(777000);
        }
        MD.append("\nThe leak check adds its one statement (it lists and releases) to the COMMIT's own round trip: one"
                + " JDBC execute, one Sync, so no extra round trip.\n\n");
    }

    private static void resetStats(TestBed bed) throws SQLException {
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement()) {
            s.execute("SELECT pg_stat_statements_reset()");
        }
    }

    /** Statements counted in our database since the reset, less the counting query itself. */
    private static long statements(TestBed bed) throws SQLException {
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT coalesce(sum(calls), 0) FROM pg_stat_statements s JOIN pg_database d"
                     + " ON d.oid = s.dbid WHERE d.datname = current_database() AND s.query NOT LIKE '%pg_stat_statements%'")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private EndToEndSection() {
    }
}
