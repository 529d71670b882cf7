package io.lockhygiene.internal.shape;

import java.util.Arrays;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** One key argument read as the lock table needs it: its kind, value or parameter, cast, and cacheability. */
class KeyArgTest {

    /** Reads the whole text as one argument, with its bind parameters numbered from 1. */
    private static KeyArg read(String arg) {
        SqlTokens t = SqlTokens.of(arg);
        int[] index = new int[t.size() + 1];
        int n = 0;
        for (int i = 0; i < t.size(); i++) {
            if (t.kind(i) == SqlTokens.PARAM && "?".equals(t.text(i))) {
                index[i] = ++n;
            }
        }
        return KeyArg.read(t, 0, t.size(), index);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '~', value = {
            "42                       | LITERAL    | 42                    | -    | true  | []",
            "-42                      | LITERAL    | -42                   | -    | true  | []",
            "+7                       | LITERAL    | 7                     | -    | true  | []",
            "-9223372036854775808     | LITERAL    | -9223372036854775808  | -    | true  | []",
            "9223372036854775808      | EXPRESSION | -                     | -    | true  | []",
            "1.5                      | EXPRESSION | -                     | -    | true  | []",
            "0x10                     | EXPRESSION | -                     | -    | true  | []",
            "42::int2                 | LITERAL    | 42                    | INT2 | true  | []",
            "42::pg_catalog.int4      | LITERAL    | 42                    | INT4 | true  | []",
            "42::numeric              | EXPRESSION | -                     | -    | true  | []",
            "NULL                     | NULL       | -                     | -    | true  | []",
            "?                        | PARAMETER  | 1                     | -    | true  | [1]",
            "?::bigint                | PARAMETER  | 1                     | INT8 | true  | [1]",
            "CAST(? AS integer)       | PARAMETER  | 1                     | INT4 | true  | [1]",
            "CAST(? AS text)          | EXPRESSION | -                     | -    | true  | [1]",
            "$1                       | EXPRESSION | -                     | -    | false | []",
            "hashtext(?)              | EXPRESSION | -                     | -    | true  | [1]",
            "hashtext(?) # hashint4(?) | EXPRESSION | -                    | -    | true  | [1, 2]",
            "~('x' || left(md5(?), 15))::bit(60)::bigint~ | EXPRESSION | - | -    | true  | [1]",
            "id                       | EXPRESSION | -                     | -    | false | []",
            "t.id                     | EXPRESSION | -                     | -    | false | []",
            "now()                    | EXPRESSION | -                     | -    | false | []",
            "random_key()             | EXPRESSION | -                     | -    | false | []",
            "\"hashtext\"(?)          | EXPRESSION | -                     | -    | false | [1]",
    })
    void readsEachKind(String arg, KeyArg.Kind kind, String value, String cast, boolean cacheable, String params) {
        KeyArg a = read(arg);
        assertEquals(kind, a.kind(), arg);
        if (kind == KeyArg.Kind.LITERAL) {
            assertEquals(Long.parseLong(value), a.literal());
        } else if (kind == KeyArg.Kind.PARAMETER) {
            assertEquals(Integer.parseInt(value), a.parameter());
        }
        assertEquals(cast.equals("-") ? null : KeyArg.IntType.valueOf(cast), a.cast());
        assertEquals(cacheable, a.cacheable(), arg + " cacheable");
        assertEquals(params, Arrays.toString(a.parameters()));
        assertEquals(arg, a.textIn(arg), "its text is the argument's, whitespace trimmed");
    }
}
