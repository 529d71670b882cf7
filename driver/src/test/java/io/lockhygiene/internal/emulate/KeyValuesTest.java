package io.lockhygiene.internal.emulate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.Types;
import java.util.HashMap;
import java.util.Map;

import io.lockhygiene.internal.locktable.AdvisoryKey.KeyValue;
import io.lockhygiene.internal.shape.KeyArg;
import io.lockhygiene.internal.shape.LockShape;
import io.lockhygiene.internal.shape.ShapeParser;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import io.lockhygiene.internal.shape.BindView;

/**
 * Which key values the JVM may read itself, exactly as PostgreSQL would take them; every other case is the
 * server's (its value, or its error). "server" below means resolve() answered null.
 */
class KeyValuesTest {

    private static String resolve(String sql, int arg, BindView binds) {
        LockShape shape = ShapeParser.parse(sql);
        KeyArg a = shape.calls().get(0).args().get(arg);
        KeyValue v = KeyValues.resolve(a, shape.calls().get(0).args().size() == 2, binds);
        return v == null ? "server" : v.toString();
    }

    /** One bind: parameter 1 set with {@code method} and its arguments. */
    private static BindView bind(String method, Object... args) {
        Map<Integer, Object[]> set = new HashMap<>();
        set.put(1, args);
        return new BindView() {
            @Override
            public String method(int index) {
                return set.containsKey(index) ? method : null;
            }

            @Override
            public Object arg(int index, int n) {
                Object[] a = set.get(index);
                return a == null || n >= a.length ? null : a[n];
            }

            @Override
            public String valueSignature(int[] indexes) {
                return null;
            }

            @Override
            public String typeSignature(int count) {
                return "";
            }

            @Override
            public void applyTo(java.sql.PreparedStatement target, int[] indexes) {
                throw new UnsupportedOperationException("the JVM reads these keys itself");
            }
        };
    }

    @ParameterizedTest(name = "{0} [{1}] -> {2}")
    @CsvSource(delimiter = '|', value = {
            "SELECT pg_advisory_lock(42)                           | 0 | 42",
            "SELECT pg_advisory_lock(-9223372036854775808)         | 0 | -9223372036854775808",
            "SELECT pg_advisory_lock(9223372036854775808)          | 0 | server",
            "SELECT pg_advisory_lock(NULL)                         | 0 | NULL",
            "SELECT pg_advisory_lock(1.5)                          | 0 | server",
            "SELECT pg_advisory_lock(40000::int2)                  | 0 | server",
            "SELECT pg_advisory_lock(30000::smallint)              | 0 | 30000",
            "SELECT pg_advisory_lock(3000000000::int4)             | 0 | server",
            "SELECT pg_advisory_lock(3000000000::bigint)           | 0 | 3000000000",
            "SELECT pg_advisory_lock(1, 2)                         | 1 | 2",
            "SELECT pg_advisory_lock(1, 3000000000)                | 1 | server",
            "SELECT pg_advisory_lock(1, 2::bigint)                 | 1 | server",
            "SELECT pg_advisory_lock(hashtext('x'))                | 0 | server",
    })
    void literals(String sql, int arg, String expected) {
        assertEquals(expected, resolve(sql, arg, null));
    }

    @ParameterizedTest(name = "{0} with {1}({2}) -> {4}")
    @CsvSource(delimiter = '|', value = {
            // bigint key: every integer setter, within range
            "SELECT pg_advisory_lock(?)          | setLong   | 5            | -       | 5",
            "SELECT pg_advisory_lock(?)          | setInt    | 5            | -       | 5",
            "SELECT pg_advisory_lock(?)          | setShort  | 5            | -       | 5",
            "SELECT pg_advisory_lock(?)          | setString | 5            | -       | server",
            "SELECT pg_advisory_lock(?)          | setBigDecimal | 5        | -       | server",
            "SELECT pg_advisory_lock(?)          | setObject | long:5       | -       | 5",
            "SELECT pg_advisory_lock(?)          | setObject | int:5        | -       | 5",
            "SELECT pg_advisory_lock(?)          | setObject | string:5     | -       | server",
            "SELECT pg_advisory_lock(?)          | setObject | long:5       | BIGINT  | server",
            // casts decide the type PostgreSQL reads
            "SELECT pg_advisory_lock(?::int4)    | setLong   | 3000000000   | -       | server",
            "SELECT pg_advisory_lock(?::int4)    | setLong   | 7            | -       | 7",
            "SELECT pg_advisory_lock(?::int2)    | setInt    | 40000        | -       | server",
            "SELECT pg_advisory_lock(CAST(? AS bigint)) | setInt | 7         | -       | 7",
            // two int keys: no implicit bigint to int
            "SELECT pg_advisory_lock(?, 1)       | setInt    | 7            | -       | 7",
            "SELECT pg_advisory_lock(?, 1)       | setLong   | 7            | -       | server",
            "SELECT pg_advisory_lock(?::int, 1)  | setLong   | 7            | -       | 7",
            "SELECT pg_advisory_lock(?::bigint, 1) | setInt  | 7            | -       | server",
            // setNull: an integer or unspecified type is NULL; a text or numeric one is the server's
            "SELECT pg_advisory_lock(?)          | setNull   | INTEGER      | -       | NULL",
            "SELECT pg_advisory_lock(?)          | setNull   | BIGINT       | -       | NULL",
            "SELECT pg_advisory_lock(?)          | setNull   | OTHER        | -       | NULL",
            "SELECT pg_advisory_lock(?)          | setNull   | VARCHAR      | -       | server",
            "SELECT pg_advisory_lock(?, 1)       | setNull   | BIGINT       | -       | server",
            "SELECT pg_advisory_lock(?::int, 1)  | setNull   | BIGINT       | -       | NULL",
    })
    void binds(String sql, String method, String value, String targetType, String expected) {
        Object v;
        if (method.equals("setNull")) {
            v = typeCode(value);
        } else if (value.startsWith("long:")) {
            v = Long.parseLong(value.substring(5));
        } else if (value.startsWith("int:")) {
            v = Integer.parseInt(value.substring(4));
        } else if (value.startsWith("string:")) {
            v = value.substring(7);
        } else if (method.equals("setLong")) {
            v = Long.parseLong(value);
        } else if (method.equals("setInt")) {
            v = Integer.parseInt(value);
        } else if (method.equals("setShort")) {
            v = Short.parseShort(value);
        } else {
            v = value;
        }
        Object target = targetType.equals("-") ? null : typeCode(targetType);
        assertEquals(expected, resolve(sql, 0, bind(method, v, target)));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "SELECT pg_advisory_lock(?) | server",
            "SELECT pg_advisory_lock($1) | server"})
    void unsetOrUnknownParametersAreTheServers(String sql, String expected) {
        assertEquals(expected, resolve(sql, 0, bind(null)));
        assertEquals(expected, resolve(sql, 0, null));
    }

    private static int typeCode(String name) {
        try {
            return Types.class.getField(name).getInt(null);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(name, e);
        }
    }
}
