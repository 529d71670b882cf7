package io.lockhygiene.cli;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import io.lockhygiene.internal.leak.HeldLock;
import io.lockhygiene.internal.leak.PgLocks;
import io.lockhygiene.monitor.AdvisoryWait;
import io.lockhygiene.monitor.AdvisoryWaitMonitor;

/** {@code doctor}: exit 0 all well, 1 a problem found, 2 usage or connection error. */
@Command(name = "doctor", usageHelpAutoWidth = true,
       
        description = {"Is a pooler in between; idle sessions holding advisory locks; long waits.", "Connects and reports whether a pooler sits in between, the server version, advisory locks"
                + " held by idle sessions (the production signature of a leak: pid, key, idle time, last query) and"
                + " advisory waits longer than the threshold.", "Exit 1 when it finds a problem, 2 on usage or"
                + " connection errors."})
final class DoctorCommand extends DatabaseCommand {
    @Option(names = "--threshold", defaultValue = "30s", converter = DurationConverter.class, paramLabel = "DURATION",
            description = "advisory waits longer than this are a problem (default: ${DEFAULT-VALUE})")
    Duration threshold;

    @Override
    int run(Database db, PrintWriter out, PrintWriter err) {
        int problems = 0;
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            out.println("LockHygiene doctor: " + db.displayUrl());
            out.println("  server: PostgreSQL " + one(s, "SHOW server_version"));
            int backend = Integer.parseInt(one(s, "SELECT pg_catalog.pg_backend_pid()"));
            int announced = announcedPid(c);
            out.println(announced == backend
                    ? "  pooler: none (connected directly; session advisory locks behave as PostgreSQL documents)"
                    : "  pooler: yes (announced pid " + announced + ", backend pid " + backend + "): under transaction"
                    + " pooling session advisory locks leak between clients; use lockhygiene.mode=rewrite or emulate");
            // Through a transaction pooler this very connection may land on a server that holds someone's lock.
            List<String> inherited = new ArrayList<>();
            try (ResultSet rs = s.executeQuery(PgLocks.LIST)) {
                while (rs.next()) {
                    HeldLock lock = HeldLock.fromListing(rs);
                    inherited.add("    backend " + lock.backendPid() + " holds advisory lock " + lock.key() + " ("
                            + lock.mode() + ") that this connection never took");
                }
            }
            if (!inherited.isEmpty()) {
                problems += inherited.size();
                out.println("  locks inherited by this connection: " + inherited.size() + " (another client of the"
                        + " pooler left them on this server: a leak)");
                inherited.forEach(out::println);
            }
            List<String> idle = new ArrayList<>();
            try (ResultSet rs = s.executeQuery(PgLocks.IDLE_HOLDERS)) {
                while (rs.next()) {
                    HeldLock lock = HeldLock.fromListing(rs);
                    idle.add("    pid " + lock.backendPid() + " holds advisory lock " + lock.key() + " (" + lock.mode()
                            + "), idle for " + rs.getLong(6) / 1000 + " s, user " + rs.getString(8) + ", application '"
                            + rs.getString(9) + "', last query: " + cut(rs.getString(7)));
                }
            }
            if (idle.isEmpty()) {
                out.println("  idle sessions holding advisory locks: none");
            } else {
                problems += idle.size();
                out.println("  idle sessions holding advisory locks: " + idle.size() + " (a session lock nobody will"
                        + " release: a leak, or a lock stranded on a pooled server)");
                idle.forEach(out::println);
            }
            List<AdvisoryWait> waits = AdvisoryWaitMonitor.forSource(db::connect).threshold(threshold).build().poll();
            if (waits.isEmpty()) {
                out.println("  advisory waits over " + threshold.toMillis() + " ms: none");
            } else {
                problems += waits.size();
                out.println("  advisory waits over " + threshold.toMillis() + " ms: " + waits.size());
                for (AdvisoryWait w : waits) {
                    out.println("    " + w + "; waiting: " + w.blockedQuery() + " | holding: " + w.blockingQuery());
                }
            }
        } catch (SQLException | RuntimeException e) {
            err.println("doctor: cannot check " + db.displayUrl() + ": " + e.getMessage());
            return 2;
        }
        out.println(problems == 0 ? "result: no problem found" : "result: " + problems + " problem(s)");
        return problems == 0 ? 0 : 1;
        }

    private static String one(Statement s, String sql) throws SQLException {
        try (ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    private static int announcedPid(Connection c) throws SQLException {
        try {
            Class<?> pg = Class.forName("org.postgresql.PGConnection", false, c.getClass().getClassLoader());
            Object unwrapped = c.unwrap(pg);
            return (Integer) pg.getMethod("getBackendPID").invoke(unwrapped);
        } catch (ReflectiveOperationException e) {
            throw new SQLException("not a pgjdbc connection: " + e);
        }
    }

    static String cut(String sql) {
        if (sql == null) {
            return "";
        }
        return io.lockhygiene.settings.Settings.LogSql.TRUNCATE.cut(sql.replaceAll("\\s+", " ").trim());
    }
}
