package io.lockhygiene.internal.guard;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import io.lockhygiene.internal.guard.PlanRun.Executed;
import io.lockhygiene.internal.pgjdbc.Pgjdbc;
import io.lockhygiene.internal.policy.LockPolicy.Situation;
import io.lockhygiene.internal.policy.TextFences;
import io.lockhygiene.internal.sql.SqlScanner.ScanResult;
import io.lockhygiene.internal.sql.SqlScanner;
import io.lockhygiene.internal.sql.TransactionControl;

/**
 * Texts of several statements: one that ends the transaction while a leak check is due (the end goes with
 * the check), and emulate's split, which runs one statement at a time, each planned on its own. One per
 * connection; its thread only.
 */
final class SeveralStatements {
    private final ConnectionGuard guard;
    private final Connection raw;
    private final TransactionEnds ends;

    SeveralStatements(ConnectionGuard guard, Connection raw, TransactionEnds ends) {
        this.guard = guard;
        this.raw = raw;
        this.ends = ends;
    }

    /**
     * A text whose last statement ends the transaction while a leak check is due: what comes before the end
     * runs as usual (its results are the application's), then the end itself goes with the check in one
     * round trip on a statement of ours, so the check runs on the server that held the transaction. The
     * application reads what pgjdbc shows: the results before the end, then the end's (no rows, count 0). A
     * prepared statement's text shows the results before its end only (its bind values go with them).
     */
    <R> Executed<R> endingTransaction(StatementPlan plan, TransactionControl end, Binds binds, StatementSource face,
                                      Call<R> call) throws SQLException {
        String endText = end.textIn(plan.original);
        if (end.statementIndex() == 0) {
            Statement ended = face.ended(ends.endTransactionByText(endText));
            return Executed.resultsOn(call.run(ended, plan.original), ended, null);
        }
        // the rewrite splices only before the end: the end starts as far from the text's end in both
        String before = plan.sent.substring(0, plan.sent.length() - (plan.original.length() - end.start()));
        StatementPlan first = plan.sent.equals(plan.original) ? guard.planNow(before, SqlScanner.mightMatter(before), false,
                plan.form)
                : new StatementPlan(before, before, SqlScanner.scan(before), SqlScanner.scan(before), null, plan.form);
        if (binds != null) {
            // a prepared statement's: its bind values go with what comes before the end, whose results it shows
            Executed<R> result = guard.run(first, binds, face, call);
            ends.endTransactionByText(endText);
            return result;
        }
        // a Statement's text: what comes before the end, then the end's own result (no rows, count 0), in order
        List<Statement> results = new ArrayList<>(2);
        try {
            results.add(runPiece(first, face));
            results.add(face.ended(ends.endTransactionByText(endText)));
        } catch (SQLException | RuntimeException e) {
            closeAll(results);
            throw e;
        }
        return shownInOrder(results, face, call, plan.original);
    }

    /**
     * emulate: a text of an owner holding emulated locks that keeps work before its end ({@code BEGIN; INSERT ...;
     * COMMIT; SELECT 1}, or statements after its COMMIT that PostgreSQL commits at the text's end): run in pieces cut
     * around each point where a fence goes ({@link TextFences}), each planned on its own, so a COMMIT goes as the
     * API's end with the fence and the autocommit statements at the end go fenced as one; the results in order, as
     * one execution's. A piece that fails stops the rest, as PostgreSQL skips the rest of a text after an error.
     */
    <R> Executed<R> fencingInText(StatementPlan plan, StatementSource face, Call<R> call) throws SQLException {
        StatementPlan read = plan.read();
        int[] points = TextFences.points(read.scan, Pgjdbc.statementRunsInTransaction(raw),
                Pgjdbc.transactionStatus(raw) == Situation.TransactionStatus.FAILED);
        List<String> pieces = TextFences.pieces(read.sent(), read.scan, points);
        List<Statement> results = new ArrayList<>(pieces.size());
        boolean autoCommit = raw.getAutoCommit();
        try {
            for (String piece : pieces) {
                // pgjdbc opens a transaction (autocommit off) before a text's first statement only: what follows an
                // end inside the text runs outside any transaction block, so no piece after the first gets its BEGIN
                boolean asInText = !results.isEmpty() && !autoCommit && !Pgjdbc.inTransaction(raw);
                if (asInText) {
                    raw.setAutoCommit(true); // idle: pgjdbc sends nothing
                }
                try {
                    results.add(runPiece(piece, face));
                } finally {
                    if (asInText) {
                        raw.setAutoCommit(false); // a transaction the piece opened stays open, as after the text
                    }
                }
            }
        } catch (SQLException | RuntimeException e) {
            closeAll(results);
            throw e;
        }
        return shownInOrder(results, face, call, plan.original);
    }

    /**
     * emulate: a text of several statements runs one statement at a time, each planned on its own (so every
     * call is decided as in PostgreSQL, in order), its results shown in order; {@code wrapped}: in one
     * transaction of ours (see the policy's SPLIT).
     */
    <R> Executed<R> split(StatementPlan plan, StatementSource face, Call<R> call, boolean wrapped) throws SQLException {
        List<String> pieces = pieces(plan.original, plan.scan);
        List<Statement> results = new ArrayList<>(pieces.size());
        Call<Boolean> all = (ignored, text) -> {
            for (String piece : pieces) {
                results.add(runPiece(piece, face));
            }
            return Boolean.TRUE;
        };
        try {
            if (wrapped) {
                ends.runWrapped(face.app(), plan.original, all);
            } else {
                all.run(null, plan.original);
            }
        } catch (SQLException | RuntimeException e) {
            closeAll(results);
            throw e;
        }
        return shownInOrder(results, face, call, plan.original);
    }

    private Statement runPiece(String piece, StatementSource outer) throws SQLException {
        return runPiece(guard.planNow(piece, SqlScanner.mightMatter(piece), false), outer);
    }

    /** One piece, planned already, on a statement of ours; returns where its results are. */
    private Statement runPiece(StatementPlan p, StatementSource outer) throws SQLException {
        PieceStatementSource face = new PieceStatementSource(outer);
        try {
            return face.results(guard.run(p, null, face, Statement::execute));
        } catch (SQLException | RuntimeException e) {
            face.close();
            throw e;
        }
    }

    /** The statements of a text, cut at its top-level semicolons. */
    static List<String> pieces(String sql, ScanResult scan) {
        List<String> out = new ArrayList<>();
        int start = 0;
        for (int semicolon : scan.semicolons()) {
            String piece = sql.substring(start, semicolon);
            if (!piece.trim().isEmpty()) {
                out.add(piece);
            }
            start = semicolon + 1;
        }
        String last = sql.substring(start);
        if (!last.trim().isEmpty()) {
            out.add(last);
        }
        return out;
    }

    /** The pieces' results as one execution's: the application's call runs over them, in order. */
    private static <R> Executed<R> shownInOrder(List<Statement> results, StatementSource face, Call<R> call,
                                                 String original) throws SQLException {
        Statement chained = face.chain(results);
        return Executed.resultsOn(call.run(chained, original), chained, null);
    }

    /** Pieces that ran before one failed: their results the application never sees. */
    private static void closeAll(List<Statement> results) {
        for (Statement s : results) {
            closeQuietly(s);
        }
    }

    private static void closeQuietly(Statement s) {
        try {
            s.close();
        } catch (SQLException | RuntimeException ignored) {
            // a piece's results the application never saw
        }
    }
}
