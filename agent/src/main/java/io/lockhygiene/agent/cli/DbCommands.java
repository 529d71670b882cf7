package io.lockhygiene.agent.cli;

import java.io.PrintStream;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.lockhygiene.leak.HeldLock;
import io.lockhygiene.log.Log;
import io.lockhygiene.monitor.AdvisoryWait;
import io.lockhygiene.monitor.AdvisoryWaitMonitor;

/** {@code doctor} and {@code monitor}: exit 0 all well, 1 a problem found, 2 usage or connection error. */
public final class DbCommands {
    private static final String CONNECT = "  --url JDBC_URL        the database (jdbc:postgresql: or jdbc:lockhygiene:postgresql:)\n"
            + "  --user U --password P credentials (or in the URL, or PGUSER / PGPASSWORD)\n"
            + "  --pgjdbc JAR          pgjdbc to connect with (default: LOCKHYGIENE_PGJDBC, the class path, next to\n"
            + "                        the agent jar, or the newest in ~/.m2)\n";

    private DbCommands() {
    }

    public static String doctorHelp() {
        return "Usage: java -jar lockhygiene-agent.jar doctor --url JDBC_URL [--threshold 30s]\n"
                + "Connects and reports whether a pooler sits in between, the server version, advisory locks held by\n"
                + "idle sessions (the production signature of a leak: pid, key, idle time, last query) and advisory\n"
                + "waits longer than the threshold. Exit 1 when it finds a problem.\n" + CONNECT;
    }

    public static String monitorHelp() {
        return "Usage: java -jar lockhygiene-agent.jar monitor --url JDBC_URL [--threshold 30s] [--classid N]\n"
                + "       [--interval 10s] [--once] [--json]\n"
                + "Reports backends waiting for an advisory lock longer than the threshold, once per episode. With\n"
                + "--once: one look, exit 1 when such waits exist. --json: one JSON object per wait.\n" + CONNECT;
    }

    static Map<String, String> options(List<String> args, Set<String> flags) {
        Map<String, String> o = new LinkedHashMap<>();
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (flags.contains(a)) {
                o.put(a, "true");
            } else if (a.startsWith("--") && a.contains("=")) {
                o.put(a.substring(0, a.indexOf('=')), a.substring(a.indexOf('=') + 1));
            } else if (a.startsWith("--") && i + 1 < args.size()) {
                o.put(a, args.get(++i));
            } else {
                throw new IllegalArgumentException("unexpected argument: " + a);
            }
        }
        return o;
    }

    static Duration duration(String s, Duration dflt) {
        if (s == null) {
            return dflt;
        }
        Matcher m = Pattern.compile("(\\d+)(ms|s|m)?").matcher(s.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("not a duration: " + s + " (like 500ms, 30s, 5m)");
        }
        long n = Long.parseLong(m.group(1));
        String u = m.group(2) == null ? "s" : m.group(2);
        return "ms".equals(u) ? Duration.ofMillis(n) : "m".equals(u) ? Duration.ofMinutes(n) : Duration.ofSeconds(n);
    }

    public static int doctor(List<String> args, PrintStream out, PrintStream err) {
        Log.quiet();
        if (args.contains("--help")) {
            out.println(doctorHelp());
            return 0;
        }
        Map<String, String> o;
        Database db;
        Duration threshold;
        try {
            o = options(args, Set.of());
            threshold = duration(o.get("--threshold"), Duration.ofSeconds(30));
            db = Database.from(o);
        } catch (IllegalArgumentException | SQLException e) {
            err.println("doctor: " + e.getMessage() + "\n" + doctorHelp());
            return 2;
        }
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
            try (ResultSet rs = s.executeQuery("SELECT l.classid::bigint, l.objid::bigint, l.objsubid, l.mode,"
                    + " pg_catalog.pg_backend_pid() FROM pg_catalog.pg_locks l WHERE l.locktype = 'advisory'"
                    + " AND l.granted AND l.pid = pg_catalog.pg_backend_pid()")) {
                while (rs.next()) {
                    HeldLock lock = new HeldLock(rs.getLong(1), rs.getLong(2), rs.getInt(3), rs.getString(4), rs.getInt(5));
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
            try (ResultSet rs = s.executeQuery("SELECT l.pid, l.classid::bigint, l.objid::bigint, l.objsubid, l.mode,"
                    + " (extract(epoch FROM (clock_timestamp() - a.state_change)) * 1000)::bigint, a.query,"
                    + " a.usename, a.application_name FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_stat_activity a"
                    + " ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted AND a.state = 'idle'"
                    + " AND l.pid <> pg_catalog.pg_backend_pid() ORDER BY 6 DESC")) {
                while (rs.next()) {
                    HeldLock lock = new HeldLock(rs.getLong(2), rs.getLong(3), rs.getInt(4), rs.getString(5), rs.getInt(1));
                    idle.add("    pid " + rs.getInt(1) + " holds advisory lock " + lock.key() + " (" + lock.mode()
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
                out.println("  advisory waits over " + threshold.getSeconds() + " s: none");
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

    public static int monitor(List<String> args, PrintStream out, PrintStream err) {
        Log.quiet();
        if (args.contains("--help")) {
            out.println(monitorHelp());
            return 0;
        }
        Map<String, String> o;
        Database db;
        Duration threshold;
        Duration interval;
        Integer classId;
        try {
            o = options(args, Set.of("--once", "--json"));
            threshold = duration(o.get("--threshold"), Duration.ofSeconds(30));
            interval = duration(o.get("--interval"), Duration.ofSeconds(10));
            classId = o.containsKey("--classid") ? Integer.valueOf(o.get("--classid")) : null;
            db = Database.from(o);
        } catch (IllegalArgumentException | SQLException e) {
            err.println("monitor: " + e.getMessage() + "\n" + monitorHelp());
            return 2;
        }
        boolean json = o.containsKey("--json");
        AdvisoryWaitMonitor monitor = AdvisoryWaitMonitor.forSource(db::connect).threshold(threshold).classId(classId).build();
        if (o.containsKey("--once")) {
            try {
                List<AdvisoryWait> waits = monitor.poll();
                for (AdvisoryWait w : waits) {
                    out.println(json ? toJson(w) : w + "; state " + w.state() + "; waiting: " + w.blockedQuery()
                            + " | holding: " + w.blockingQuery());
                }
                if (!json && waits.isEmpty()) {
                    out.println("no advisory wait over " + threshold.toMillis() + " ms");
                }
                return waits.isEmpty() ? 0 : 1;
            } catch (SQLException | RuntimeException e) {
                err.println("monitor: cannot query " + db.displayUrl() + ": " + e.getMessage());
                return 2;
            }
        }
        Set<String> episodes = new HashSet<>();
        boolean down = false;
        while (!Thread.currentThread().isInterrupted()) {
            try {
                Set<String> seen = new HashSet<>();
                for (AdvisoryWait w : monitor.poll()) {
                    String episode = w.blockedPid() + "/" + w.key();
                    seen.add(episode);
                    if (episodes.add(episode)) {
                        out.println(json ? toJson(w) : java.time.Instant.now() + " " + w + "; waiting: " + w.blockedQuery()
                                + " | holding: " + w.blockingQuery());
                        out.flush();
                    }
                }
                episodes.retainAll(seen);
                if (down) {
                    err.println(java.time.Instant.now() + " monitor: the server answers again");
                    down = false;
                }
            } catch (SQLException | RuntimeException e) {
                if (!down) {
                    err.println(java.time.Instant.now() + " monitor: cannot query the server (" + e.getMessage() + "); retrying");
                    down = true;
                }
            }
            try {
                Thread.sleep(interval.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return 0;
    }

    static String toJson(AdvisoryWait w) {
        return "{\"blockedPid\":" + w.blockedPid() + ",\"blockingPid\":" + w.blockingPid() + ",\"key\":" + io.lockhygiene.events.JsonText.quote(w.key())
                + ",\"mode\":" + io.lockhygiene.events.JsonText.quote(w.mode()) + ",\"waitMillis\":" + w.waitMillis() + ",\"state\":"
                + io.lockhygiene.events.JsonText.quote(w.state()) + ",\"waitEvent\":" + io.lockhygiene.events.JsonText.quote(w.waitEventType() + ":" + w.waitEvent())
                + ",\"blockedQuery\":" + io.lockhygiene.events.JsonText.quote(w.blockedQuery()) + ",\"blockingQuery\":" + io.lockhygiene.events.JsonText.quote(w.blockingQuery()) + "}";
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

    private static String cut(String sql) {
        if (sql == null) {
            return "";
        }
        return io.lockhygiene.settings.Settings.LogSql.TRUNCATE.cut(sql.replaceAll("\\s+", " ").trim());
    }
}
