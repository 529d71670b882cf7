package io.lockhygiene.internal.shape;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

/**
 * One key argument of an advisory call, as the lock table needs it: an integer literal, NULL, a bind
 * parameter (bare, or cast to an integer type), or an expression only the server can evaluate
 * ({@code hashtext(?)}, a column). An expression made only of immutable functions, operators, casts,
 * literals and parameters is {@link #cacheable}: its value for the same text and bind values never changes
 * on one database.
 */
public final class KeyArg {
    public enum Kind { LITERAL, NULL, PARAMETER, EXPRESSION }

    /** Integer types a cast may name for the lock table to read a bind value itself. */
    public enum IntType { INT2, INT4, INT8 }

    /**
     * Functions and words that keep an expression's value a function of its inputs alone (immutable in
     * PostgreSQL's catalog, given the same database): hashes, text and bit functions, casts.
     */
    private static final Set<String> IMMUTABLE_WORDS = new HashSet<>(Arrays.asList(
            "hashtext", "hashtextextended", "hashint4", "hashint8", "hashint4extended", "hashint8extended",
            "md5", "sha224", "sha256", "sha384", "sha512", "left", "right", "substr", "substring", "lower",
            "upper", "abs", "mod", "length", "octet_length", "encode", "decode", "trim", "btrim", "ltrim",
            "rtrim", "replace", "coalesce", "nullif", "greatest", "least", "crc32", "crc32c", "cast", "as",
            "from", "for", "bigint", "int", "int2", "int4", "int8", "integer", "smallint", "text", "varchar",
            "character", "varying", "bit", "bytea", "numeric", "hex", "escape", "base64", "utf8", "convert_to"));

    private final Kind kind;
    private final long literal;
    private final int parameter;
    private final IntType cast;
    private final int start;
    private final int end;
    private final int[] parameters;
    private final boolean cacheable;

    private KeyArg(Kind kind, long literal, int parameter, IntType cast, int start, int end, int[] parameters,
                   boolean cacheable) {
        this.kind = kind;
        this.literal = literal;
        this.parameter = parameter;
        this.cast = cast;
        this.start = start;
        this.end = end;
        this.parameters = parameters;
        this.cacheable = cacheable;
    }

    public Kind kind() {
        return kind;
    }

    /** The value of a LITERAL. */
    public long literal() {
        return literal;
    }

    /** The JDBC index (from 1) of a PARAMETER. */
    public int parameter() {
        return parameter;
    }

    /** The integer type a PARAMETER or LITERAL is cast to, or null when it is not cast. */
    public IntType cast() {
        return cast;
    }

    public int start() {
        return start;
    }

    public int end() {
        return end;
    }

    /** The JDBC indexes of the bind parameters inside the argument, in text order. */
    public int[] parameters() {
        return parameters.clone();
    }

    int parameterCount() {
        return parameters.length;
    }

    int parameterAt(int i) {
        return parameters[i];
    }

    /** For an EXPRESSION: its value depends only on its text and bind values (see the class comment). */
    public boolean cacheable() {
        return cacheable;
    }

    /** The argument's text in {@code sql}. */
    public String textIn(String sql) {
        return sql.substring(start, end);
    }

    @Override
    public String toString() {
        switch (kind) {
            case LITERAL:
                return Long.toString(literal);
            case NULL:
                return "NULL";
            case PARAMETER:
                return "?" + parameter + (cast == null ? "" : "::" + cast);
            default:
                return "expr@" + start + (cacheable ? " (immutable)" : "");
        }
    }

    /**
     * Reads the argument spanning tokens {@code [from, to)}; {@code parameterIndex[i]} is the JDBC index
     * of token i when it is a bind parameter.
     */
    static KeyArg read(SqlTokens t, int from, int to, int[] parameterIndex) {
        int start = t.start(from);
        int end = t.end(to - 1);
        int[] params = parametersIn(t, from, to, parameterIndex);
        int n = to - from;
        // NULL
        if (n == 1 && t.isWord(from, "null")) {
            return new KeyArg(Kind.NULL, 0, 0, null, start, end, params, true);
        }
        // [+|-] integer [::type]   |   ? [::type]   |   CAST(? AS type)
        int i = from;
        boolean negative = false;
        if (t.isOp(i, "-") || t.isOp(i, "+")) {
            negative = t.isOp(i, "-");
            i++;
        }
        if (t.kind(i) == SqlTokens.NUMBER || (t.kind(i) == SqlTokens.PARAM && i == from)) {
            boolean param = t.kind(i) == SqlTokens.PARAM;
            if (param && !"?".equals(t.text(i))) {
                return expression(t, from, to, params); // $1 in JDBC text: the server's to answer
            }
            int afterValue = i + 1;
            IntType type = null;
            if (afterValue < to) {
                if (!t.isOp(afterValue, "::") || afterValue + 1 >= to) {
                    return expression(t, from, to, params);
                }
                type = intType(t, afterValue + 1, to);
                if (type == null) {
                    return expression(t, from, to, params);
                }
            }
            if (param) {
                return new KeyArg(Kind.PARAMETER, 0, parameterIndex[i], type, start, end, params, true);
            }
            Long value = integer(t.text(i), negative);
            return value == null ? expression(t, from, to, params)
                    : new KeyArg(Kind.LITERAL, value, 0, type, start, end, params, true);
        }
        if (t.isWord(from, "cast") && t.kind(from + 1) == SqlTokens.LPAREN && t.kind(to - 1) == SqlTokens.RPAREN
                && t.kind(from + 2) == SqlTokens.PARAM && "?".equals(t.text(from + 2)) && t.isWord(from + 3, "as")) {
            IntType type = intType(t, from + 4, to - 1);
            if (type != null) {
                return new KeyArg(Kind.PARAMETER, 0, parameterIndex[from + 2], type, start, end, params, true);
            }
        }
        return expression(t, from, to, params);
    }

    private static KeyArg expression(SqlTokens t, int from, int to, int[] params) {
        boolean cacheable = true;
        for (int i = from; i < to && cacheable; i++) {
            int k = t.kind(i);
            if (k == SqlTokens.QUOTED || k == SqlTokens.SEMI || k == SqlTokens.LBRACE || k == SqlTokens.RBRACE
                    || (k == SqlTokens.PARAM && !"?".equals(t.text(i)))) {
                cacheable = false;
            } else if (k == SqlTokens.IDENT && !IMMUTABLE_WORDS.contains(t.name(i))) {
                cacheable = false; // a column, or a function that may answer otherwise next time
            } else if (k == SqlTokens.DOT) {
                cacheable = false;
            }
        }
        return new KeyArg(Kind.EXPRESSION, 0, 0, null, t.start(from), t.end(to - 1), params, cacheable);
    }

    private static int[] parametersIn(SqlTokens t, int from, int to, int[] parameterIndex) {
        int n = 0;
        for (int i = from; i < to; i++) {
            if (parameterIndex[i] > 0) {
                n++;
            }
        }
        int[] out = new int[n];
        n = 0;
        for (int i = from; i < to; i++) {
            if (parameterIndex[i] > 0) {
                out[n++] = parameterIndex[i];
            }
        }
        return out;
    }

    /** The integer type named by tokens [from, to), or null. */
    private static IntType intType(SqlTokens t, int from, int to) {
        if (to - from == 1 && t.kind(from) == SqlTokens.IDENT) {
            switch (t.name(from)) {
                case "int8":
                case "bigint":
                    return IntType.INT8;
                case "int4":
                case "int":
                case "integer":
                    return IntType.INT4;
                case "int2":
                case "smallint":
                    return IntType.INT2;
                default:
                    return null;
            }
        }
        if (to - from == 3 && t.isWord(from, "pg_catalog") && t.kind(from + 1) == SqlTokens.DOT) {
            return intType(t, from + 2, to);
        }
        return null;
    }

    /** A decimal integer literal PostgreSQL reads as an integer type; null for anything else (1.5, 1e3, 0x10). */
    private static Long integer(String digits, boolean negative) {
        for (int i = 0; i < digits.length(); i++) {
            if (!Character.isDigit(digits.charAt(i))) {
                return null;
            }
        }
        try {
            return Long.parseLong(negative ? "-" + digits : digits);
        } catch (NumberFormatException tooLarge) {
            return null; // numeric in PostgreSQL: the server says what it makes of it
        }
    }
}
