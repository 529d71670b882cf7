package io.lockhygiene.internal.sql;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * A statement that is nothing but advisory calls on keys known before it runs:
 * {@code SELECT pg_try_advisory_lock(?)}, {@code SELECT pg_advisory_unlock(42) AS released},
 * {@code SELECT pg_advisory_xact_lock(1, 2), pg_advisory_lock_shared(?)}. Each argument is an integer
 * literal or a bind parameter, so emulate can decide every call in its lock table and answer the
 * statement itself, as PostgreSQL would have, without sending it. Anything else (a FROM, an expression,
 * a comment) is not one: it runs as it is.
 */
public final class LockStatement {

    /** One argument: a literal, or the 1-based index of a bind parameter. */
    public static final class Argument {
        private final long literal;
        private final int parameter;

        Argument(long literal, int parameter) {
            this.literal = literal;
            this.parameter = parameter;
        }

        /** The bind parameter's index, or 0 for a literal. */
        public int parameter() {
            return parameter;
        }

        public long literal() {
            return literal;
        }
    }

    /** One select-list item: the call and the label of its result column. */
    public static final class Item {
        private final AdvisoryFunction function;
        private final String label;
        private final List<Argument> arguments;

        Item(AdvisoryFunction function, String label, List<Argument> arguments) {
            this.function = function;
            this.label = label;
            this.arguments = arguments;
        }

        public AdvisoryFunction function() {
            return function;
        }

        public String label() {
            return label;
        }

        /** 0 (unlock_all), 1 (a bigint key) or 2 (two int keys). */
        public List<Argument> arguments() {
            return arguments;
        }
    }

    private static final java.util.regex.Pattern INTEGER = java.util.regex.Pattern.compile("[+-]?[0-9]{1,19}");
    private final List<Item> items;
    private final boolean sessionLevel;

    private LockStatement(List<Item> items) {
        this.items = Collections.unmodifiableList(items);
        boolean session = false;
        for (Item i : items) {
            session |= i.function.isSessionLevel();
        }
        this.sessionLevel = session;
    }

    public List<Item> items() {
        return items;
    }

    /** True when some call is session-level. */
    public boolean hasSessionLevelCall() {
        return sessionLevel;
    }

    /** The statement as a lock statement, or null when it is anything more. */
    public static LockStatement parse(String sql, ScanResult scan) {
        if (scan.calls().isEmpty() || scan.statementCount() != 1 || scan.hasWrites() || scan.hasTransactionControl()
                || sql.contains("--") || sql.contains("/*")) {
            return null;
        }
        int pos = skipSpace(sql, 0);
        if (!sql.regionMatches(true, pos, "select", 0, 6) || pos + 6 >= sql.length()
                || !Character.isWhitespace(sql.charAt(pos + 6))) {
            return null;
        }
        pos += 6;
        List<Item> items = new ArrayList<>(scan.calls().size());
        int parameters = 0;
        for (AdvisoryCall c : scan.calls()) {
            if (c.closeParen() < 0 || c.nameStart() < pos) {
                return null;
            }
            String before = sql.substring(pos, c.nameStart()).trim().toLowerCase(Locale.ROOT);
            if (!before.isEmpty() && !before.equals("pg_catalog.") && !before.equals("\"pg_catalog\".")) {
                return null;
            }
            List<Argument> args = new ArrayList<>(2);
            String argText = c.argumentText(sql).trim();
            if (!argText.isEmpty()) {
                String[] parts = argText.split(",", -1);
                if (parts.length > 2) {
                    return null;
                }
                for (String part : parts) {
                    Argument a = argument(part.trim(), parts.length == 2, parameters + 1);
                    if (a == null) {
                        return null;
                    }
                    parameters += a.parameter == 0 ? 0 : 1;
                    args.add(a);
                }
            }
            if (args.size() != expectedArguments(c.function(), args.size())) {
                return null;
            }
            pos = skipSpace(sql, c.closeParen() + 1);
            String label = c.function().sqlName();
            int aliasEnd = alias(sql, pos);
            if (aliasEnd < 0) {
                return null;
            }
            if (aliasEnd > pos) {
                label = aliasLabel(sql.substring(pos, aliasEnd));
                if (label == null) {
                    return null;
                }
                pos = skipSpace(sql, aliasEnd);
            }
            items.add(new Item(c.function(), label, args));
            boolean more = pos < sql.length() && sql.charAt(pos) == ',';
            if (more != (items.size() < scan.calls().size())) {
                return null; // a list item that is not a call, or a trailing comma
            }
            if (more) {
                pos++;
            }
        }
        if (pos < sql.length() && sql.charAt(pos) == ';') {
            pos = skipSpace(sql, pos + 1);
        }
        return pos == sql.length() ? new LockStatement(items) : null;
    }

    private static int expectedArguments(AdvisoryFunction f, int given) {
        if (f == AdvisoryFunction.UNLOCK_ALL) {
            return 0;
        }
        return given == 2 ? 2 : 1;
    }

    private static Argument argument(String text, boolean pair, int nextParameter) {
        if ("?".equals(text)) {
            return new Argument(0, nextParameter);
        }
        int cast = text.indexOf("::");
        String number = cast < 0 ? text : text.substring(0, cast).trim();
        if (cast >= 0) {
            String type = text.substring(cast + 2).trim().toLowerCase(Locale.ROOT);
            boolean intType = type.equals("int") || type.equals("int4") || type.equals("integer") || type.equals("int2")
                    || type.equals("smallint");
            boolean bigint = type.equals("bigint") || type.equals("int8");
            if (!(intType || (bigint && !pair))) {
                return null;
            }
        }
        if (!INTEGER.matcher(number).matches()) {
            return null;
        }
        long value;
        try {
            value = Long.parseLong(number.startsWith("+") ? number.substring(1) : number);
        } catch (NumberFormatException e) {
            return null;
        }
        if (pair && (value < Integer.MIN_VALUE || value > Integer.MAX_VALUE)) {
            return null; // PostgreSQL has no (bigint, int) form: let it say so
        }
        return new Argument(value, 0);
    }

    /** The end of an alias starting at {@code pos} ({@code pos} itself when there is none), or -1 when malformed. */
    private static int alias(String sql, int pos) {
        if (pos >= sql.length() || sql.charAt(pos) == ',' || sql.charAt(pos) == ';') {
            return pos;
        }
        int p = pos;
        if (sql.regionMatches(true, p, "as", 0, 2) && p + 2 < sql.length()
                && (Character.isWhitespace(sql.charAt(p + 2)) || sql.charAt(p + 2) == '"')) {
            p = skipSpace(sql, p + 2);
        }
        if (p < sql.length() && sql.charAt(p) == '"') {
            int close = sql.indexOf('"', p + 1);
            while (close > 0 && close + 1 < sql.length() && sql.charAt(close + 1) == '"') {
                close = sql.indexOf('"', close + 2);
            }
            return close < 0 ? -1 : close + 1;
        }
        int start = p;
        while (p < sql.length() && (Character.isLetterOrDigit(sql.charAt(p)) || sql.charAt(p) == '_'
                || sql.charAt(p) == '$')) {
            p++;
        }
        return p == start ? -1 : p;
    }

    /** The column label PostgreSQL gives an alias: quoted as written, unquoted folded to lower case. */
    private static String aliasLabel(String alias) {
        String a = alias.trim();
        if (a.regionMatches(true, 0, "as", 0, 2) && a.length() > 2
                && (Character.isWhitespace(a.charAt(2)) || a.charAt(2) == '"')) {
            a = a.substring(2).trim();
        }
        if (a.startsWith("\"")) {
            return a.length() < 2 ? null : a.substring(1, a.length() - 1).replace("\"\"", "\"");
        }
        if (a.isEmpty() || Character.isDigit(a.charAt(0))) {
            return null;
        }
        String lower = a.toLowerCase(Locale.ROOT);
        // reserved words that cannot follow without AS would make this something else: keep it simple
        if (lower.equals("from") || lower.equals("where") || lower.equals("for") || lower.equals("limit")
                || lower.equals("union") || lower.equals("order") || lower.equals("group") || lower.equals("into")) {
            return null;
        }
        return lower;
    }

    private static int skipSpace(String sql, int pos) {
        while (pos < sql.length() && Character.isWhitespace(sql.charAt(pos))) {
            pos++;
        }
        return pos;
    }
}
