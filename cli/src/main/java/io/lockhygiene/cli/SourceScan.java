package io.lockhygiene.cli;

import java.util.ArrayList;
import java.util.List;

import io.lockhygiene.internal.lint.SkipLockedAnalysis;
import io.lockhygiene.internal.policy.Rule;
import io.lockhygiene.internal.sql.AdvisoryCall;
import io.lockhygiene.internal.sql.SqlScanner.ScanResult;
import io.lockhygiene.internal.sql.SqlScanner;

/**
 * Findings in one file's text: session-level advisory lock calls (also inside DO blocks and function or
 * procedure bodies, said so), and SKIP LOCKED pinned by equality (a note: whether those columns are a
 * unique key cannot be known without the catalog). A {@code lockhygiene:ignore} comment on the line of a
 * finding suppresses it.
 */
final class SourceScan {
    static final String RULE_SESSION = Rule.SESSION_ADVISORY_LOCK.id();
    static final String RULE_SKIP = Rule.SKIP_LOCKED_SINGLE_KEY.id();

    private SourceScan() {
    }

    static List<Finding> scan(String displayPath, String content) {
        List<Finding> findings = new ArrayList<>();
        LineIndex lines = new LineIndex(content);
        for (SqlInSource.Fragment f : SqlInSource.fragments(displayPath, content)) {
            if (SqlScanner.mightMatter(f.text)) {
                scanSql(displayPath, f.text, f.offset, false, lines, content, findings);
            }
        }
        return findings;
    }

    private static void scanSql(String path, String sql, int base, boolean inBody, LineIndex lines, String content,
                                List<Finding> out) {
        ScanResult r = SqlScanner.scan(sql);
        for (AdvisoryCall c : r.calls()) {
            if (!c.function().isSessionLevel()) {
                continue;
            }
            String what = c.function().isAcquire()
                    ? Rule.sessionLockProblem(c.function().sqlName()) + " " + Rule.sessionLockFix(c.function().rewriteTo())
                    : Rule.sessionUnlockProblem(c.function().sqlName());
            add(out, path, lines, content, base + c.nameStart(), RULE_SESSION, c.function().isAcquire() ? "warning" : "note",
                    what + (inBody ? " (inside a DO block or function body)" : ""));
        }
        for (int[] body : r.codeBodies()) {
            scanSql(path, sql.substring(body[0], body[1]), base + body[0], true, lines, content, out);
        }
        if (!r.skipLockedPositions().isEmpty()) {
            for (int skip : r.skipLockedPositions()) {
                String statement = statementAround(sql, r.semicolons(), skip);
                SkipLockedAnalysis a;
                try {
                    a = SkipLockedAnalysis.analyze(statement);
                } catch (LinkageError e) {
                    continue;
                }
                if (a.kind() == SkipLockedAnalysis.Kind.CANDIDATE && !a.claimsFromASet()) {
                    add(out, path, lines, content, base + skip, RULE_SKIP, "note",
                            Rule.skipLockedProblem("with " + a.pinnedColumns() + " of " + a.table() + " pinned by equality"
                                    + " (a problem if that is a unique key, which cannot be known without the catalog)")
                                    + " " + Rule.SKIP_LOCKED_FIX + (inBody ? " (inside a DO block or function body)" : ""));
                }
            }
        }
    }

    private static String statementAround(String sql, List<Integer> semicolons, int at) {
        int start = 0;
        int end = sql.length();
        for (int semi : semicolons) {
            if (semi < at) {
                start = semi + 1;
            } else {
                end = semi;
                break;
            }
        }
        return sql.substring(start, end);
    }

    private static void add(List<Finding> out, String path, LineIndex lines, String content, int offset, String rule,
                            String severity, String message) {
        int line = lines.line(offset);
        String text = lines.text(content, line);
        if (text.contains("lockhygiene:ignore")) {
            return;
        }
        out.add(new Finding(path, line, lines.column(offset), rule, severity, message, text));
    }

    /** Offsets to 1-based lines and columns. */
    static final class LineIndex {
        private final int[] starts;

        LineIndex(String s) {
            int count = 1;
            for (int i = 0; i < s.length(); i++) {
                if (s.charAt(i) == '\n') {
                    count++;
                }
            }
            starts = new int[count];
            int k = 1;
            for (int i = 0; i < s.length(); i++) {
                if (s.charAt(i) == '\n') {
                    starts[k++] = i + 1;
                }
            }
        }

        int line(int offset) {
            int lo = 0;
            int hi = starts.length - 1;
            while (lo < hi) {
                int mid = (lo + hi + 1) >>> 1;
                if (starts[mid] <= offset) {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            return lo + 1;
        }

        int column(int offset) {
            return offset - starts[line(offset) - 1] + 1;
        }

        String text(String s, int line) {
            int from = starts[line - 1];
            int to = line < starts.length ? starts[line] : s.length();
            return s.substring(from, Math.min(to, s.length()));
        }
    }
}
