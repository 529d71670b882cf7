package io.lockhygiene.internal.sql;

import java.util.Collections;
import java.util.List;

/** What the scanner found in one SQL text. Immutable once built; safe to cache and share. */
public final class ScanResult {
    /** The verdict for the overwhelming majority of statements: nothing of interest. */
    public static final ScanResult NOTHING = new ScanResult(Collections.emptyList(), false, false, 1,
            Collections.emptyList(), Collections.emptyList(), Collections.emptyList(), Collections.emptyList());

    private final List<AdvisoryCall> calls;
    private final boolean skipLocked;
    private final boolean sessionLevel;
    private final boolean sessionAcquire;
    private final boolean writes;
    private final int statements;
    private final List<int[]> bodies;
    private final List<Integer> semicolons;
    private final List<Integer> skipLockedAt;
    private final List<TransactionControl> transactionControls;

    ScanResult(List<AdvisoryCall> calls, boolean skipLocked, boolean writes, int statements, List<int[]> bodies,
               List<Integer> semicolons, List<Integer> skipLockedAt, List<TransactionControl> transactionControls) {
        this.transactionControls = Collections.unmodifiableList(transactionControls);
        this.bodies = Collections.unmodifiableList(bodies);
        this.semicolons = Collections.unmodifiableList(semicolons);
        this.skipLockedAt = Collections.unmodifiableList(skipLockedAt);
        this.calls = Collections.unmodifiableList(calls);
        this.skipLocked = skipLocked;
        this.writes = writes;
        this.statements = statements;
        boolean session = false;
        boolean acquire = false;
        for (AdvisoryCall c : calls) {
            if (c.function().isSessionLevel()) {
                session = true;
                acquire |= c.function().isAcquire();
            }
        }
        this.sessionLevel = session;
        this.sessionAcquire = acquire;
    }

    /** Every advisory function call, in text order, session-level and xact alike. */
    public List<AdvisoryCall> calls() {
        return calls;
    }

    /** True when a session-level function (lock, try, unlock or unlock_all) is called. */
    public boolean hasSessionLevelCall() {
        return sessionLevel;
    }

    /** True when a session-level lock is taken (lock or try, exclusive or shared). */
    public boolean hasSessionAcquire() {
        return sessionAcquire;
    }

    /** True when {@code SKIP LOCKED} appears outside strings and comments. */
    public boolean hasSkipLocked() {
        return skipLocked;
    }

    /**
     * True when the text has a keyword of a data, schema, transaction or session change, or a row lock
     * (INSERT, UPDATE, DELETE, MERGE, CREATE, SET, FOR UPDATE/SHARE, DO, CALL, COPY, ...).
     */
    public boolean hasWrites() {
        return writes;
    }

    /**
     * The [start, end) ranges of dollar-quoted strings that are code: bodies of DO blocks and of CREATE
     * FUNCTION / PROCEDURE. Their calls are not in {@link #calls()}: no statement-level rewrite can see
     * into them; a file scan looks inside with another scan.
     */
    public List<int[]> codeBodies() {
        return bodies;
    }

    /** Positions of top-level semicolons, for splitting a script into statements. */
    public List<Integer> semicolons() {
        return semicolons;
    }

    /** Positions of the SKIP of each SKIP LOCKED. */
    public List<Integer> skipLockedPositions() {
        return skipLockedAt;
    }

    /** Number of non-empty statements separated by semicolons. */
    public int statementCount() {
        return statements;
    }

    /** True when a blocking (non-try) session-level lock is taken. */
    public boolean hasBlockingAcquire() {
        for (AdvisoryCall c : calls) {
            if (c.function().isSessionLevel() && c.function().isAcquire() && !c.function().isTry()) {
                return true;
            }
        }
        return false;
    }

    /** Top-level BEGIN, COMMIT, ROLLBACK [TO], SAVEPOINT, ... statements, in text order. */
    public List<TransactionControl> transactionControls() {
        return transactionControls;
    }

    /** True when the text opens or ends a transaction itself: LockHygiene must not wrap it in one. */
    public boolean hasTransactionControl() {
        return !transactionControls.isEmpty();
    }

    /**
     * The transaction end that is the text's last statement (COMMIT, ROLLBACK, END, ABORT, PREPARE
     * TRANSACTION, without AND CHAIN), or null: after such a text no transaction is open, whatever
     * came before, so a leak check may follow it on the same server.
     */
    public TransactionControl finalTransactionEnd() {
        if (transactionControls.isEmpty()) {
            return null;
        }
        TransactionControl last = transactionControls.get(transactionControls.size() - 1);
        return last.kind() == TransactionControl.Kind.END && last.statementIndex() == statements - 1 ? last : null;
    }

    /** True when a BEGIN (or a chained end) stands before {@code end} in the text. */
    public boolean opensTransactionBefore(TransactionControl end) {
        for (TransactionControl tc : transactionControls) {
            if (tc.start() < end.start()
                    && (tc.kind() == TransactionControl.Kind.BEGIN || tc.kind() == TransactionControl.Kind.END_AND_CHAIN)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether each call (same order as {@link #calls()}) runs inside a transaction block, following the
     * text's own BEGIN and COMMIT from the state the text starts in.
     */
    public boolean[] callsInTransaction(boolean startsInTransaction) {
        boolean[] in = new boolean[calls.size()];
        int t = 0;
        boolean open = startsInTransaction;
        for (int i = 0; i < in.length; i++) {
            int at = calls.get(i).nameStart();
            while (t < transactionControls.size() && transactionControls.get(t).start() < at) {
                TransactionControl.Kind k = transactionControls.get(t).kind();
                if (k == TransactionControl.Kind.BEGIN || k == TransactionControl.Kind.END_AND_CHAIN) {
                    open = true;
                } else if (k == TransactionControl.Kind.END) {
                    open = false;
                }
                t++;
            }
            in[i] = open;
        }
        return in;
    }

    /** The first session-level call, for messages. */
    public AdvisoryCall firstSessionCall() {
        for (AdvisoryCall c : calls) {
            if (c.function().isSessionLevel()) {
                return c;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return "ScanResult" + calls + (skipLocked ? " SKIP LOCKED" : "");
    }
}
