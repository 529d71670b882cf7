package io.lockhygiene.it.semantics;

import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import io.lockhygiene.it.bed.Eventually;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.semantics.ProgramGrammar.Key;
import io.lockhygiene.it.semantics.ProgramGrammar.Model;
import io.lockhygiene.it.semantics.ProgramGrammar.Step;
import io.lockhygiene.it.semantics.ProgramGrammar.WouldWait;

import static io.lockhygiene.it.semantics.ProgramGrammar.learn;
import static io.lockhygiene.it.semantics.ProgramGrammar.next;

/**
 * Runs a differential program (see {@link DifferentialTest}) for one client, step by step, and writes what each
 * step answered (results, errors, warnings) and what an observer session then sees of every key.
 */
final class ProgramRunner {
    static final int STEPS = 24;
    static final int TIMEOUT_SECONDS = 5;

    /** Who runs the program: the reference, emulate, or the control. */
    enum Client { DIRECT_PLAIN, EMULATE, POOLED_PLAIN }

    private final TestBed bed;
    /**
     * Emulate with every transaction end sampled for the leak check (lockhygiene.leakCheckSample=1): every plain
     * autocommit statement is wrapped in a transaction of ours whose COMMIT carries the check, and the answers
     * must still be PostgreSQL's.
     */
    private final boolean sampleEveryEnd;
    /** The transaction pooler emulate and the control go through. */
    private final Route pooler;

    /** emulate's lockhygiene.holderSessions. */
    private final int holderSessions;

    ProgramRunner(TestBed bed, boolean sampleEveryEnd, Route pooler) {
        this(bed, sampleEveryEnd, pooler, 1);
    }

    ProgramRunner(TestBed bed, boolean sampleEveryEnd, Route pooler, int holderSessions) {
        this(bed, sampleEveryEnd, pooler, holderSessions, null);
    }

    /** @param holderLinger emulate's lockhygiene.holderLinger, or null for the default */
    ProgramRunner(TestBed bed, boolean sampleEveryEnd, Route pooler, int holderSessions, String holderLinger) {
        this.bed = bed;
        this.sampleEveryEnd = sampleEveryEnd;
        this.pooler = pooler;
        this.holderSessions = holderSessions;
        this.holderLinger = holderLinger;
    }

    /** emulate's lockhygiene.holderLinger (null: the default). */
    private final String holderLinger;


    private Connection open(Client client) throws SQLException {
        switch (client) {
            case EMULATE:
                List<String> params = new ArrayList<>(List.of("lockhygiene.mode=emulate",
                        "lockhygiene.holderSessions=" + holderSessions));
                if (sampleEveryEnd) {
                    params.add("lockhygiene.leakCheckSample=1");
                }
                if (holderLinger != null) {
                    params.add("lockhygiene.holderLinger=" + holderLinger);
                }
                return bed.connectLockHygiene(pooler, params.toArray(new String[0]));
            case POOLED_PLAIN:
                return bed.connect(pooler);
            default:
                return bed.connect(Route.DIRECT);
        }
    }

    void prepareKeysTable(List<Key> keys) throws SQLException {
        try (Connection c = bed.connect(Route.DIRECT)) {
            ProgramGrammar.prepareKeysTable(c, keys);
        }
    }

    /**
     * Runs a program on {@code connections} connections: generated from {@code r} as the reference answers
     * (its steps added to {@code performed}) when {@code program} is null, else replayed.
     */
    List<String> run(Random r, int connections, List<Step> program, Client client, List<Key> keys,
                             List<Step> performed) throws Exception {
        Model model = new Model();
        List<String> trace = new ArrayList<>();
        Connection[] cs = new Connection[connections];
        Statement[] ss = new Statement[connections];
        int[] pids = new int[connections];
        try (Connection observerConnection = bed.connect(Route.DIRECT);
             Statement observer = observerConnection.createStatement()) {
            for (int i = 0; i < connections; i++) {
                cs[i] = open(client);
                ss[i] = cs[i].createStatement();
                ss[i].setQueryTimeout(TIMEOUT_SECONDS);
                if (program == null) {
                    try (ResultSet rs = ss[i].executeQuery("SELECT pg_backend_pid()")) {
                        rs.next();
                        pids[i] = rs.getInt(1);
                    }
                }
            }
            WouldWait wouldWait = (key, c, shared) -> {
                return ProgramGrammar.heldByOther(observer, key, connections == 2 ? pids[1 - c] : -1, shared);
            };
            ProgramGrammar.Bounded bounded = c -> {
                // the reference's own session says whether its waits are bounded now (an aborted transaction
                // answers with an error: then a lock call fails at once anyway)
                try (Statement show = cs[c].createStatement()) {
                    show.execute("SHOW lock_timeout");
                    boolean lock = !isZero(show.getResultSet());
                    show.execute("SHOW statement_timeout");
                    return lock || !isZero(show.getResultSet());
                } catch (SQLException e) {
                    return false;
                }
            };
            int steps = program == null ? STEPS : program.size();
            for (int i = 0; i < steps; i++) {
                Step step = program == null ? next(r, model, connections, keys, wouldWait, bounded) : program.get(i);
                String outcome = perform(cs, ss, step, client, observer);
                if (program == null) {
                    learn(model, step, outcome);
                    performed.add(step);
                    if ("sessions-end".equals(step.kind())) {
                        for (int j = 0; j < connections; j++) { // the program's new sessions, for wouldWait
                            pids[j] = cs[j].unwrap(org.postgresql.PGConnection.class).getBackendPID();
                        }
                    }
                }
                trace.add(step + " => " + outcome + " | " + ProgramGrammar.probe(observer, keys));
            }
        } finally {
            for (Connection c : cs) {
                if (c != null) {
                    c.close();
                }
            }
        }
        return trace;
    }

    /**
     * The step "the session that holds the locks ends": the sessions go (PostgreSQL: each of the program's own;
     * emulate: its lock holder's), the step waits until the server has ended them, and each connection of the
     * program is opened again, as an application does after its connection failed.
     */
    private String sessionsEnd(Connection[] cs, Statement[] ss, Client client, Statement observer) throws Exception {
        List<Integer> ended = new ArrayList<>();
        if (client == Client.EMULATE) {
            try (ResultSet rs = observer.executeQuery("SELECT pid FROM pg_stat_activity WHERE application_name ="
                    + " 'lockhygiene lock holder' AND datname = current_database()")) {
                while (rs.next()) {
                    ended.add(rs.getInt(1));
                }
            }
        } else {
            for (Connection c : cs) { // direct: the protocol's backend key is the session's pid (no query: it may be aborted)
                ended.add(c.unwrap(org.postgresql.PGConnection.class).getBackendPID());
            }
        }
        for (int pid : ended) {
            observer.execute("SELECT pg_terminate_backend(" + pid + ")");
        }
        for (int pid : ended) {
            Eventually.until("backend " + pid + " gone", java.time.Duration.ofSeconds(10),
                    () -> !bed.admin().backendExists(pid));
        }
        for (int i = 0; i < cs.length; i++) {
            cs[i].close();
            cs[i] = open(client);
            ss[i] = cs[i].createStatement();
            ss[i].setQueryTimeout(TIMEOUT_SECONDS);
        }
        return "ended";
    }

    private static boolean isZero(ResultSet rs) throws SQLException {
        try (rs) {
            rs.next();
            return "0".equals(rs.getString(1));
        }
    }

    /**
     * A step's outcome; one that a bound ended (55P03, 57014) also says whether it ended in time: within a second,
     * where the programs' bounds are 60 to 120 ms and an unbounded wait runs to the statements' 5 s timeout.
     */
    private String perform(Connection[] cs, Statement[] ss, Step step, Client client, Statement observer) {
        long t0 = System.nanoTime();
        String outcome = performOnce(cs, ss, step, client, observer);
        return ProgramGrammar.boundedOutcome(outcome, t0);
    }

    private String performOnce(Connection[] cs, Statement[] ss, Step step, Client client, Statement observer) {
        Connection c = cs[step.connection()];
        try {
            switch (step.kind()) {
                case "sessions-end":
                    return sessionsEnd(cs, ss, client, observer);
                case "begin-api":
                    c.setAutoCommit(false);
                    return "ok";
                case "commit-api":
                    c.commit();
                    c.setAutoCommit(true);
                    return "ok";
                case "rollback-api":
                    c.rollback();
                    c.setAutoCommit(true);
                    return "ok";
                case "prepared":
                    try (PreparedStatement ps = c.prepareStatement(step.sql())) {
                        ps.setQueryTimeout(TIMEOUT_SECONDS);
                        bindAll(ps, step.params(), 0);
                        return render(ps.execute(), ps);
                    }
                case "callable":
                    try (CallableStatement call = c.prepareCall(step.sql())) {
                        call.setQueryTimeout(TIMEOUT_SECONDS);
                        bindAll(call, step.params(), 0);
                        return render(call.execute(), call);
                    }
                case "callable-out":
                case "callable-out-bool":
                    try (CallableStatement call = c.prepareCall(step.sql())) {
                        call.setQueryTimeout(TIMEOUT_SECONDS);
                        boolean bool = step.kind().endsWith("bool");
                        call.registerOutParameter(1, bool ? Types.BOOLEAN : Types.OTHER);
                        bindAll(call, step.params(), 1);
                        boolean rs = call.execute();
                        Object out = bool ? (Object) call.getBoolean(1) : call.getObject(1);
                        return "execute " + rs + " out " + out + (bool && call.wasNull() ? " (null)" : "")
                                + warnings(call);
                    }
                default:
                    Statement s = ss[step.connection()];
                    return render(s.execute(step.sql()), s);
            }
        } catch (SQLException e) {
            return "ERROR " + e.getSQLState();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static String render(boolean resultSet, Statement s) throws SQLException {
        StringBuilder out = new StringBuilder();
        boolean rs = resultSet;
        while (true) {
            if (rs) {
                try (ResultSet r = s.getResultSet()) {
                    int columns = r.getMetaData().getColumnCount();
                    out.append('[');
                    for (int i = 1; i <= columns; i++) {
                        out.append(i == 1 ? "" : ",").append(r.getMetaData().getColumnLabel(i));
                    }
                    out.append(']');
                    while (r.next()) {
                        for (int i = 1; i <= columns; i++) {
                            out.append(i == 1 ? " " : "|").append(r.getString(i));
                        }
                    }
                }
            } else if (s.getUpdateCount() == -1) {
                break;
            } else {
                out.append("ok");
            }
            rs = s.getMoreResults();
        }
        return out + warnings(s);
    }

    private static String warnings(Statement s) throws SQLException {
        StringBuilder out = new StringBuilder();
        for (SQLWarning w = s.getWarnings(); w != null; w = w.getNextWarning()) {
            out.append(" WARNING ").append(w.getMessage());
        }
        s.clearWarnings();
        return out.toString();
    }

    private static void bindAll(PreparedStatement ps, Object[] params, int offset) throws SQLException {
        for (int i = 0; i < params.length; i++) {
            Object p = params[i];
            if (p instanceof Long) {
                ps.setLong(offset + i + 1, (Long) p);
            } else if (p instanceof Integer) {
                ps.setInt(offset + i + 1, (Integer) p);
            } else {
                ps.setString(offset + i + 1, (String) p);
            }
        }
    }
}
