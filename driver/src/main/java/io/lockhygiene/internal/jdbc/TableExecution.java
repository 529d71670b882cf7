package io.lockhygiene.internal.jdbc;

import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.List;

import io.lockhygiene.events.EventType;
import io.lockhygiene.internal.emulate.AdvisoryKey;
import io.lockhygiene.internal.leak.LockCall;
import io.lockhygiene.internal.sql.AdvisoryCall;
import io.lockhygiene.internal.sql.AdvisoryFunction;
import io.lockhygiene.internal.sql.LockStatement;
import io.lockhygiene.internal.sql.ScanResult;
import io.lockhygiene.settings.Settings;

/**
 * emulate: one execution of a lock statement of one connection, decided call by call in the process's
 * lock table, and answered with the row PostgreSQL would have returned (pgjdbc builds the result set).
 */
final class TableExecution {
    private static final int BOOL = 16;
    private static final int VOID = 2278;
    private static final byte[] TRUE = {'t'};
    private static final byte[] FALSE = {'f'};
    private static final byte[] EMPTY = {};

    private final Emulation emulation;
    private final SharedHolder shared;
    private final TableTransaction table;
    private final Settings settings;
    private final LeakReporter reporter;

    TableExecution(Emulation emulation, SharedHolder shared, TableTransaction table, Settings settings,
                   LeakReporter reporter) {
        this.emulation = emulation;
        this.shared = shared;
        this.table = table;
        this.settings = settings;
        this.reporter = reporter;
    }

    /**
     * One execution of a lock statement, decided call by call in the process's lock table, as PostgreSQL
     * would for this connection's session: the answer is the row PostgreSQL would have returned, with its
     * warnings. Returns null, having done nothing, when a key cannot be known here (a bind type PostgreSQL
     * would treat otherwise, or NULL): the statement then runs as it is.
     */
    LocalResult run(LockStatement statement, ScanResult scan, String sql, Object[] binds, Statement appStatement,
                    boolean inTransaction) throws SQLException {
        List<LockStatement.Item> items = statement.items();
        AdvisoryKey[] keys = new AdvisoryKey[items.size()];
        for (int i = 0; i < keys.length; i++) {
            if (items.get(i).function() != AdvisoryFunction.UNLOCK_ALL) {
                keys[i] = LockKeys.resolve(items.get(i), binds);
                if (keys[i] == null) {
                    return null;
                }
            }
        }
        LockOwner owner = emulation.owner();
        if (statement.hasSessionLevelCall()) {
            Throwable stack = CallSite.capture("session-level advisory lock call sent here");
            for (AdvisoryCall c : scan.calls()) {
                if (c.function().isSessionLevel()) {
                    LockCall call = new LockCall(c.function(), sql, c.argumentText(sql), stack);
                    owner.calls.add(call);
                    UnlockWatch.taken(call);
                }
            }
            reporter.publish(EventType.EMULATED, scan.firstSessionCall().function().sqlName(), null, null, sql,
                    "decided in the lock table of " + shared + " for " + owner, stack);
        }
        int timeout = appStatement.getQueryTimeout();
        long deadline = timeout > 0 ? System.nanoTime() + timeout * 1_000_000_000L : 0;
        String[] labels = new String[keys.length];
        int[] types = new int[keys.length];
        byte[][] row = new byte[keys.length][];
        SQLWarning warnings = null;
        Object autocommitTransaction = null;
        try {
            for (int i = 0; i < keys.length; i++) {
                LockStatement.Item item = items.get(i);
                AdvisoryFunction f = item.function();
                labels[i] = item.label();
                types[i] = f.isTry() || f.kind() == AdvisoryFunction.Kind.RELEASE ? BOOL : VOID;
                boolean answer = true;
                switch (f.kind()) {
                    case ACQUIRE:
                        Object tx = null;
                        int level = 0;
                        if (!f.isSessionLevel()) {
                            if (!inTransaction) {
                                autocommitTransaction = autocommitTransaction == null ? new Object() : autocommitTransaction;
                                tx = autocommitTransaction; // its own transaction: released at the statement's end
                            } else {
                                tx = table.current();
                                level = table.level();
                            }
                        }
                        answer = shared.acquire(owner, keys[i], f.isShared(), f.isTry(), tx, level,
                                settings.lockTimeoutMillis(), deadline);
                        break;
                    case RELEASE:
                        answer = shared.unlock(owner, keys[i], f.isShared());
                        if (!answer) {
                            SQLWarning w = new SQLWarning("you don't own a lock of type "
                                    + (f.isShared() ? "ShareLock" : "ExclusiveLock"), "01000");
                            if (warnings == null) {
                                warnings = w;
                            } else {
                                warnings.setNextWarning(w);
                            }
                        }
                        break;
                    default:
                        shared.unlockAll(owner);
                        break;
                }
                row[i] = types[i] == VOID ? EMPTY : (answer ? TRUE : FALSE);
            }
        } catch (SQLException | RuntimeException appFailure) {
            if (inTransaction) {
                emulation.failApplicationTransaction(appFailure);
            }
            throw appFailure;
        } finally {
            if (autocommitTransaction != null) {
                shared.releaseTransaction(autocommitTransaction, 0);
            }
        }
        LocalResult result = LocalResult.row(appStatement, Pgjdbc.driverResultSet(appStatement, labels, types, row),
                warnings);
        UnlockWatch.check(result, scan, sql, reporter, settings);
        return result;
    }

    /**
     * The answer to a single try-acquisition that PostgreSQL would refuse because another owner holds the
     * key (on its way to the holder, see {@link HandOvers}): false, without sending it; null when the
     * statement is not that or the key is free.
     */
    LocalResult refusedByHandOver(LockStatement statement, Object[] binds, Statement appStatement) throws SQLException {
        if (statement.items().size() != 1) {
            return null;
        }
        LockStatement.Item item = statement.items().get(0);
        AdvisoryFunction f = item.function();
        if (f.kind() != AdvisoryFunction.Kind.ACQUIRE || !f.isTry()) {
            return null;
        }
        AdvisoryKey key = LockKeys.resolve(item, binds);
        if (key == null || shared.handOvers.conflicting(emulation.owner(), key, f.isShared()) == null) {
            return null;
        }
        return LocalResult.row(appStatement, Pgjdbc.driverResultSet(appStatement, new String[] {item.label()},
                new int[] {BOOL}, new byte[][] {FALSE}), null);
    }
}
