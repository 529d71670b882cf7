package io.lockhygiene.internal.sql;

import java.util.Arrays;

/**
 * A statement's text in PostgreSQL's own form, as a driver that sends it so (R2DBC's, Vert.x's) is given it, read
 * by the core's shape reader: PostgreSQL's numbered parameters ({@code $n}) written as JDBC's {@code ?}, in order,
 * with which {@code $n} each {@code ?} stands for. Strings, quoted names and comments are skipped by the one lexer,
 * so a {@code $1} inside them stays text.
 */
public final class NumberedParameters {
    /** The text with {@code ?} for each {@code $n}. */
    public final String jdbcText;
    /** For the {@code i}-th {@code ?} (0-based), its {@code n}. */
    private final int[] dollars;

    private NumberedParameters(String jdbcText, int[] dollars) {
        this.jdbcText = jdbcText;
        this.dollars = dollars;
    }

    public static NumberedParameters of(String sql) {
        StringBuilder out = null;
        int[] dollars = new int[4];
        int count = 0;
        int copied = 0;
        SqlLexer lexer = new SqlLexer(sql);
        for (int kind = lexer.next(); kind != SqlLexer.END; kind = lexer.next()) {
            if (kind != SqlLexer.PARAM || sql.charAt(lexer.start()) != '$') {
                continue;
            }
            if (out == null) {
                out = new StringBuilder(sql.length());
            }
            out.append(sql, copied, lexer.start()).append('?');
            copied = lexer.end();
            if (count == dollars.length) {
                dollars = Arrays.copyOf(dollars, count * 2);
            }
            dollars[count++] = Integer.parseInt(sql.substring(lexer.start() + 1, lexer.end()));
        }
        if (out == null) {
            return new NumberedParameters(sql, new int[0]);
        }
        out.append(sql, copied, sql.length());
        return new NumberedParameters(out.toString(), Arrays.copyOf(dollars, count));
    }

    /** A text of the core's with JDBC's {@code ?} parameters as PostgreSQL's {@code $1}, {@code $2}, ... in order. */
    public static String numbered(String jdbcText) {
        StringBuilder out = new StringBuilder(jdbcText.length() + 8);
        int copied = 0;
        int n = 0;
        SqlLexer lexer = new SqlLexer(jdbcText);
        for (int kind = lexer.next(); kind != SqlLexer.END; kind = lexer.next()) {
            if (kind == SqlLexer.PARAM && jdbcText.charAt(lexer.start()) == '?' && lexer.end() == lexer.start() + 1) {
                out.append(jdbcText, copied, lexer.start()).append('$').append(++n);
                copied = lexer.end();
            }
        }
        return out.append(jdbcText, copied, jdbcText.length()).toString();
    }

    /** The {@code n} of {@code $n} the JDBC parameter {@code index} (from 1) stands for, or 0. */
    public int dollarOf(int index) {
        return index >= 1 && index <= dollars.length ? dollars[index - 1] : 0;
    }
}
