package io.lockhygiene.internal.sql;

import java.util.ArrayList;
import java.util.List;

import io.lockhygiene.internal.sql.SqlScanner.ScanResult;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.StringLength;

/**
 * Property-based checks of the scanner and the rewriter (jqwik, bounded tries so the build stays fast):
 * no input makes them throw; text without session-level calls comes back as the same String; a rewrite
 * changes only the names (and adds only aliases) it means to.
 */
class ScannerPropertiesTest {

    /** SQL-ish pieces, mixed so that quotes, comments and dollar quotes open and close anywhere. */
    @Provide
    Arbitrary<String> sqlish() {
        Arbitrary<String> piece = Arbitraries.of("SELECT ", "pg_advisory_lock", "pg_try_advisory_lock_shared", "(", ")",
                ",", ";", "'", "''", "E'", "\\'", "\"", "$$", "$a$", "$1", "?", "--", "\n", "/*", "*/", "pg_catalog",
                ".", " ", "1", "hashtext('x')", "SKIP LOCKED", "FOR UPDATE", "AS", "x", "advisory", "U&'", "DO ",
                "pg_advisory_unlock_all()", "\"PG_ADVISORY_LOCK\"", "FROM", "\u00e9", "$", "E", "e'\\\\'");
        return piece.list().ofMaxSize(40).map(l -> String.join("", l));
    }

    @Property(tries = 3000)
    void neverThrowsOnArbitraryText(@ForAll @StringLength(max = 300) String any) {
        ScanResult r = SqlScanner.scan(any);
        SqlRewriter.toTransactionScoped(any, r);
        SqlScanner.mightMatter(any);
    }

    @Property(tries = 3000)
    void neverThrowsOnSqlishText(@ForAll("sqlish") String sql) {
        SqlRewriter.toTransactionScoped(sql, SqlScanner.scan(sql));
    }

    @Property(tries = 3000)
    void textWithoutSessionCallsComesBackIdentical(@ForAll("sqlish") String sql) {
        ScanResult r = SqlScanner.scan(sql);
        if (!r.hasSessionLevelCall()) {
            String out = SqlRewriter.toTransactionScoped(sql, r);
            if (out != sql) {
                throw new AssertionError("changed: " + sql + " -> " + out);
            }
        }
    }

    @Property(tries = 3000)
    void prefilterNeverMissesACall(@ForAll("sqlish") String sql) {
        if (!SqlScanner.mightMatter(sql) && !SqlScanner.scan(sql).calls().isEmpty()) {
            throw new AssertionError("the prefilter let a call through: " + sql);
        }
    }

    @Property(tries = 3000)
    void aRewriteChangesOnlyTheNamesItMeansTo(@ForAll("sqlish") String sql) {
        ScanResult r = SqlScanner.scan(sql);
        String out = SqlRewriter.toTransactionScoped(sql, r);
        // Rebuild the expected text from the original and the scanner's positions alone: any other
        // difference between it and the rewrite is a change the rewrite did not mean to make.
        StringBuilder rebuilt = new StringBuilder();
        int copied = 0;
        List<Object[]> expected = new ArrayList<>();
        for (AdvisoryCall c : r.calls()) {
            if (c.function().isSessionLevel()) {
                expected.add(new Object[] {c.nameStart(), c.nameEnd(), c.function().rewriteTo()});
                if (c.aliasable() && c.closeParen() >= 0) {
                    expected.add(new Object[] {c.closeParen() + 1, c.closeParen() + 1, " AS " + c.function().sqlName()});
                }
            }
        }
        expected.sort((a, b) -> Integer.compare((Integer) a[0], (Integer) b[0]));
        for (Object[] e : expected) {
            rebuilt.append(sql, copied, (Integer) e[0]).append((String) e[2]);
            copied = (Integer) e[1];
        }
        rebuilt.append(sql.substring(copied));
        if (!rebuilt.toString().equals(out)) {
            throw new AssertionError("unexpected change: " + sql + " -> " + out);
        }
    }

    @Property(tries = 200)
    void largeAndRepetitiveInputsScanWithoutError(@ForAll("sqlish") String seed) {
        String big = seed.repeat(2_000);
        SqlScanner.scan(big);
        SqlScanner.mightMatter(big);
    }

    @Provide
    Arbitrary<String> calls() {
        Arbitrary<String> name = Arbitraries.of("pg_advisory_lock", "pg_try_advisory_lock", "pg_advisory_lock_shared",
                "pg_advisory_unlock", "PG_ADVISORY_LOCK", "pg_catalog.pg_try_advisory_lock_shared", "\"pg_advisory_lock\"");
        Arbitrary<String> args = Arbitraries.of("1", "1, 2", "?", "$1", "hashtext('a,b')", "7742, hashtext('report-daily')");
        Arbitrary<String> wrap = Arbitraries.of("SELECT %s", "SELECT x FROM (SELECT %s) s", "WITH c AS (SELECT %s) SELECT * FROM c",
                "SELECT * FROM jobs WHERE %s LIMIT 1", "SELECT 1, %s FROM t");
        return Combinators.combine(name, args, wrap).as((n, a, w) -> String.format(w, n + "(" + a + ")"));
    }

    @Property(tries = 500)
    void everyGeneratedCallIsFoundAndRewrittenToAValidXactName(@ForAll("calls") String sql) {
        ScanResult r = SqlScanner.scan(sql);
        if (r.calls().size() != 1 || !r.hasSessionLevelCall()) {
            throw new AssertionError("not found: " + sql);
        }
        String out = SqlRewriter.toTransactionScoped(sql, r);
        if (!out.contains("xact")) {
            throw new AssertionError("not rewritten: " + sql + " -> " + out);
        }
        if (SqlScanner.scan(out).hasSessionLevelCall()) {
            throw new AssertionError("still session-level: " + out);
        }
    }
}
