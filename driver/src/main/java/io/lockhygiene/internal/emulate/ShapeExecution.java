package io.lockhygiene.internal.emulate;

import java.sql.SQLException;
import java.sql.SQLWarning;
import java.util.ArrayList;
import java.util.List;

import io.lockhygiene.events.EventType;
import io.lockhygiene.internal.emulate.KeyResolution.CallKey;
import io.lockhygiene.internal.emulate.KeyValues;
import io.lockhygiene.internal.emulate.Outcome.LocalRows;
import io.lockhygiene.internal.holder.EmulatedWait.Limits;
import io.lockhygiene.internal.holder.Holder;
import io.lockhygiene.internal.leak.CallSite;
import io.lockhygiene.internal.leak.RecentCalls.LockCall;
import io.lockhygiene.internal.leak.UnlockWatch;
import io.lockhygiene.internal.locktable.AdvisoryKey;
import io.lockhygiene.internal.locktable.LockOwner;
import io.lockhygiene.internal.locktable.TransactionId;
import io.lockhygiene.internal.shape.LockShape;
import io.lockhygiene.internal.shape.Node;
import io.lockhygiene.internal.shape.ShapeEvaluator;
import io.lockhygiene.internal.shape.ShapeText;
import io.lockhygiene.internal.sql.AdvisoryFunction;
import io.lockhygiene.internal.shape.BindView;

/**
 * One execution of a statement whose advisory calls the lock table decides, as PostgreSQL would for the
 * owner's session: PostgreSQL's verdict first where the statement has more than calls ({@link Validation}),
 * then the keys ({@link KeyResolution}), then each call PostgreSQL would make, in its order
 * ({@link ShapeEvaluator}), decided by the process's holder; then the answer: made here when the statement
 * is only calls, CASE, NOT / AND / OR and boolean constants, otherwise computed by the server from the
 * calls' results ({@link ShapeText#answerQuery}).
 */
final class ShapeExecution {
    private final ExecutionContext context;
    private final LockShape shape;
    private final BindView binds;
    private final boolean inTransaction;
    private final Limits limits;
    private final Holder holder;
    private final LockOwner owner;
    /** The transaction-level locks of an autocommit statement belong to it alone. */
    private TransactionId statementTransaction;
    private SQLWarning warnings;
    private Throwable stack;
    /** Keys the server computed for an owner without a JDBC connection, or null. */
    private final ServerKeys computed;

    /**
     * @param owner who takes the locks (the connection, or the thread a pool lends it to)
     * @param inTransaction the statement runs inside a transaction block (as the server says)
     * @param callSite where the application sent it, when it is not this thread's stack (R2DBC); else null
     * @param computed keys the server computed for an owner without a JDBC connection (R2DBC), or null
     */
    ShapeExecution(ExecutionContext context, LockOwner owner, LockShape shape, BindView binds,
                   boolean inTransaction, Limits limits, Throwable callSite, ServerKeys computed) {
        this.stack = callSite;
        this.computed = computed;
        this.context = context;
        this.shape = shape;
        this.binds = binds;
        this.inTransaction = inTransaction;
        this.limits = limits;
        this.holder = context.holder;
        this.owner = owner;
    }

    /** The outcome; on failure the statement's own transaction-level holds went (the caller fails the rest). */
    Outcome run() throws SQLException {
        try {
            if (shape.needsValidation()) {
                Validation.check(shape, binds, context.raw); // only JDBC owners run such shapes
            }
            record();
            Outcome outcome = shape.form() == LockShape.Form.ROWS ? rows() : oneRow();
            if (warnings != null) {
                UnlockWatch.notHeldInEmulate(warnings, shape.sql(), context.reporter, context.settings, owner, owner.ofThread());
            }
            return outcome;
        } catch (SQLException | RuntimeException e) {
            endStatement();
            throw e;
        }
    }

    private Outcome oneRow() throws SQLException {
        CallKey[] keys = KeyResolution.keys(shape, binds, holder.keys(), context.raw, computed);
        Node.Call[] probe = shape.freeProbe();
        ShapeEvaluator.Row row;
        AdvisoryKey probed = probe == null ? null : keys[probe[0].index()].key();
        if (probed != null && probed.equals(keys[probe[1].index()].key())) {
            // Kill Bill's isFree: take and let go at once, as one question (one round trip at most)
            boolean free = holder.probeFree(owner, probed, probe[0].function().isShared());
            row = ShapeEvaluator.evaluate(shape, c -> c == probe[0] ? Boolean.valueOf(free) : Boolean.TRUE);
        } else {
            row = ShapeEvaluator.evaluate(shape, c -> decide(c, keys[c.index()]));
        }
        if (!shape.answeredLocally()) {
            return new Outcome(null, ShapeText.answerQuery(shape, row), warnings, this::endStatement,
                    limits.statementTimeoutLeftMillis());
        }
        List<LockShape.Item> items = shape.items();
        String[] labels = new String[items.size()];
        int[] types = new int[items.size()];
        byte[][] values = new byte[items.size()][];
        for (int i = 0; i < labels.length; i++) {
            LockShape.Item item = items.get(i);
            labels[i] = item.label();
            Node typed = item.expr() instanceof Node.Opaque ? shape.fromCall() : item.expr();
            types[i] = returnsVoid(typed) ? LocalRows.VOID : LocalRows.BOOL;
            values[i] = LocalRows.text(row.item(i));
        }
        List<byte[][]> rows = new ArrayList<>(1);
        rows.add(values);
        Object out = shape.form() == LockShape.Form.CALL_ESCAPE ? row.result(shape.fromCall().index()) : null;
        endStatement();
        return new Outcome(new LocalRows(labels, types, rows, warnings, out), null, warnings, () -> { });
    }

    private Outcome rows() throws SQLException {
        List<CallKey[]> keyRows = KeyResolution.rows(shape, binds, context.raw, computed);
        List<LockShape.Item> items = shape.items();
        String[] labels = new String[items.size()];
        int[] types = new int[items.size()];
        for (int i = 0; i < labels.length; i++) {
            labels[i] = items.get(i).label();
            types[i] = returnsVoid(items.get(i).expr()) ? LocalRows.VOID : LocalRows.BOOL;
        }
        List<byte[][]> rows = new ArrayList<>(keyRows.size());
        int[] noticesBefore = new int[keyRows.size()];
        for (CallKey[] keys : keyRows) {
            ShapeEvaluator.Row row = ShapeEvaluator.evaluate(shape, c -> decide(c, keys[c.index()]));
            noticesBefore[rows.size()] = chainLength(warnings); // this row's notices go before it, as PostgreSQL's
            byte[][] values = new byte[items.size()][];
            for (int i = 0; i < values.length; i++) {
                values[i] = LocalRows.text(row.item(i));
            }
            rows.add(values);
        }
        endStatement();
        return new Outcome(new LocalRows(labels, types, rows, warnings, null, noticesBefore), null, warnings, () -> { });
    }

    private static int chainLength(SQLWarning w) {
        int n = 0;
        for (; w != null; w = w.getNextWarning()) {
            n++;
        }
        return n;
    }

    private static boolean returnsVoid(Node n) {
        return n.type() == Node.Type.VOID;
    }

    /** One call PostgreSQL makes, decided for the owner: TRUE, FALSE, null (NULL key) or VOID. */
    private Object decide(Node.Call c, CallKey callKey) throws SQLException {
        AdvisoryFunction f = c.function();
        if (callKey.isNull()) {
            return null; // strict: a NULL key calls nothing and returns NULL
        }
        AdvisoryKey key = callKey.key();
        if (key != null) {
            remember(c, key);
        }
        switch (f.kind()) {
            case ACQUIRE: {
                TransactionId tx = null;
                int level = 0;
                if (!f.isSessionLevel()) {
                    if (inTransaction) {
                        tx = context.tableTransaction.current();
                        level = context.tableTransaction.level();
                    } else {
                        if (statementTransaction == null) {
                            statementTransaction = new TransactionId();
                        }
                        tx = statementTransaction;
                    }
                }
                boolean got = holder.acquire(owner, key, f.isShared(), f.isTry(), tx, level, limits);
                return f.isTry() ? Boolean.valueOf(got) : ShapeEvaluator.VOID;
            }
            case RELEASE: {
                boolean ok = holder.unlock(owner, key, f.isShared());
                if (!ok) {
                    SQLWarning w = new SQLWarning("you don't own a lock of type "
                            + (f.isShared() ? "ShareLock" : "ExclusiveLock"), "01000");
                    if (warnings == null) {
                        warnings = w;
                    } else {
                        warnings.setNextWarning(w);
                    }
                }
                return ok;
            }
            default:
                holder.unlockAll(owner);
                return ShapeEvaluator.VOID;
        }
    }

    /** The EMULATED event of an execution with session-level calls, with where the application sent it. */
    private void record() {
        if (shape.hasSessionLevelCall()) {
            if (!io.lockhygiene.internal.events.Events.anyListener()) {
                io.lockhygiene.internal.events.Events.countOnly(EventType.EMULATED); // no message to build
                return;
            }
            context.reporter.publish(EventType.EMULATED, firstSessionCall().sqlName(), null, null, shape.sql(),
                    "decided in the lock table of " + holder + " for " + owner, stack());
        }
    }

    /** The stack of this execution's call site, captured once, only for statements with session-level calls. */
    private Throwable stack() {
        if (stack == null) {
            stack = CallSite.capture("session-level advisory lock call sent here");
        }
        return stack;
    }

    /**
     * A session-level call decided for the owner is remembered for attribution, with its key as decided (an
     * expression's value, a bind's), so a lock reported later is matched to the call that took it.
     */
    private void remember(Node.Call c, AdvisoryKey key) {
        if (!c.function().isSessionLevel()) {
            return;
        }
        LockCall call = new LockCall(c.function(), shape.sql(), key.sqlArguments(), stack());
        owner.calls().add(call);
        UnlockWatch.taken(call);
    }

    private AdvisoryFunction firstSessionCall() {
        for (Node.Call c : shape.calls()) {
            if (c.function().isSessionLevel()) {
                return c.function();
            }
        }
        return shape.calls().get(0).function();
    }

    /** The statement is over for the table: an autocommit statement's transaction-level locks go. */
    private void endStatement() {
        TransactionId tx = statementTransaction;
        statementTransaction = null;
        if (tx != null) {
            try {
                holder.releaseTransaction(tx, 0);
            } catch (SQLException | RuntimeException e) {
                context.reporter.checkFailed("while releasing an autocommit statement's transaction-level locks", e);
            }
        }
    }
}
