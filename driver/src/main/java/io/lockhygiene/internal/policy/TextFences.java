package io.lockhygiene.internal.policy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.lockhygiene.internal.sql.SqlLexer;
import io.lockhygiene.internal.sql.SqlScanner.ScanResult;
import io.lockhygiene.internal.sql.TransactionControl;

/**
 * The fences of a text of several statements sent by an owner holding emulated locks ({@link LockPolicy.OwnerStep#FENCES_IN_TEXT}):
 * where they go, once for every front end, and the two ways a front end sends them: in the one text
 * ({@link #spliced}, R2DBC, which sends a text as one statement) or in pieces cut there ({@link #pieces}, JDBC,
 * whose pieces each go as a statement of their own).
 */
public final class TextFences {
    private TextFences() {
    }

    /**
     * Where the fence of an owner holding emulated locks goes in a text of several statements, so that nothing the
     * text keeps is kept once a session holding the owner's locks is gone: before each end that keeps work (COMMIT,
     * END, COMMIT AND CHAIN, PREPARE TRANSACTION), and at the text's end when it ends in an implicit transaction
     * (statements after its last transaction control in autocommit, which PostgreSQL commits when the text ends).
     * A failing fence aborts the transaction it runs in, and PostgreSQL skips the rest of the text, so what the
     * end after it would have kept is not. A fence before an end with nothing open costs nothing but the question.
     *
     * @param inTransaction the text starts inside a transaction block
     * @param failed that transaction is failed: the text's first end, before any other transaction control, is its
     *               rollback (a fence there would fail with 25P02 and leave the transaction open)
     * @return statement indices, in order, before which a fence goes; {@code scan.statementCount()} for the end
     */
    public static int[] points(ScanResult scan, boolean inTransaction, boolean failed) {
        List<TransactionControl> controls = scan.transactionControls();
        int[] points = new int[controls.size() + 1];
        int n = 0;
        boolean open = inTransaction;
        boolean stillFailed = inTransaction && failed;
        int last = -1;
        for (TransactionControl tc : controls) {
            boolean end = tc.kind() == TransactionControl.Kind.END || tc.kind() == TransactionControl.Kind.END_AND_CHAIN;
            if (end && tc.keepsWork() && !stillFailed) {
                points[n++] = tc.statementIndex();
            }
            if (tc.kind() == TransactionControl.Kind.BEGIN || tc.kind() == TransactionControl.Kind.END_AND_CHAIN) {
                open = true;
            } else if (tc.kind() == TransactionControl.Kind.END) {
                open = false;
            }
            stillFailed = false;
            last = tc.statementIndex();
        }
        if (!open && last < scan.statementCount() - 1 && (last >= 0 || scan.statementCount() > 1)) {
            points[n++] = scan.statementCount(); // autocommit statements at the text's end: one implicit transaction
        }
        return Arrays.copyOf(points, n);
    }

    /**
     * {@code sql} with {@code fence} before each point's statement and, for the text's end, after its last one: one
     * text, each fence's result at the index {@link #resultIndices} gives.
     */
    public static String spliced(String sql, ScanResult scan, int[] points, String fence) {
        StringBuilder out = new StringBuilder(sql.length() + points.length * (fence.length() + 4));
        int from = 0;
        for (int p : points) {
            if (p == scan.statementCount()) {
                // a newline ends a line comment; a text that ends in its own semicolon gets no empty statement
                out.append(sql, from, sql.length()).append(endsInSemicolon(sql) ? "\n" : "\n;\n").append(fence);
                return out.toString();
            }
            int at = controlAt(scan, p).start();
            out.append(sql, from, at).append(fence).append(";\n");
            from = at;
        }
        return out.append(sql, from, sql.length()).toString();
    }

    /** Where each fence's result comes among the spliced text's results (one per statement, in order). */
    public static long[] resultIndices(int[] points) {
        long[] at = new long[points.length];
        for (int k = 0; k < points.length; k++) {
            at[k] = points[k] + k; // k fences before it
        }
        return at;
    }

    /**
     * {@code sql} cut before and after each point's statement, and before the statements after the last transaction
     * control when the text's end is a point: the pieces in order, none empty. Run one after another, each as a
     * statement of its own, a point's statement goes as a transaction end of its own (fenced when it keeps work)
     * and the last autocommit statements as an autocommit text of their own (fenced as one).
     */
    public static List<String> pieces(String sql, ScanResult scan, int[] points) {
        List<Integer> cuts = new ArrayList<>();
        List<TransactionControl> controls = scan.transactionControls();
        for (int p : points) {
            if (p == scan.statementCount()) {
                cuts.add(after(sql, controls.get(controls.size() - 1)));
            } else {
                TransactionControl tc = controlAt(scan, p);
                cuts.add(tc.start());
                cuts.add(after(sql, tc));
            }
        }
        List<String> out = new ArrayList<>();
        int from = 0;
        for (int cut : cuts) {
            addPiece(out, sql.substring(from, cut));
            from = cut;
        }
        addPiece(out, sql.substring(from));
        return out;
    }

    private static boolean endsInSemicolon(String sql) {
        SqlLexer lexer = new SqlLexer(sql);
        int last = SqlLexer.END;
        for (int kind = lexer.next(); kind != SqlLexer.END; kind = lexer.next()) {
            last = kind;
        }
        return last == SqlLexer.SEMI;
    }

    private static int after(String sql, TransactionControl tc) {
        return Math.min(sql.length(), tc.end() + 1); // past its semicolon
    }

    private static void addPiece(List<String> out, String piece) {
        SqlLexer lexer = new SqlLexer(piece);
        for (int kind = lexer.next(); kind != SqlLexer.END; kind = lexer.next()) {
            if (kind != SqlLexer.SEMI) {
                out.add(piece);
                return;
            }
        }
    }

    private static TransactionControl controlAt(ScanResult scan, int statementIndex) {
        for (TransactionControl tc : scan.transactionControls()) {
            if (tc.statementIndex() == statementIndex) {
                return tc;
            }
        }
        throw new IllegalArgumentException("no transaction control at statement " + statementIndex);
    }
}
