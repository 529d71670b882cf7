package io.lockhygiene.r2dbc.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;

import io.lockhygiene.internal.emulate.KeyValues;
import io.lockhygiene.internal.shape.LockShape;
import io.lockhygiene.internal.shape.ShapeParser;
import io.lockhygiene.internal.sql.NumberedParameters;
import io.r2dbc.spi.Statement;
import org.junit.jupiter.api.Test;

/** R2DBC bindings read as the lock table reads a JDBC statement's, and replayed onto the sent statement. */
class R2dbcBindsTest {
    @Test
    void bindsByIndexAndByNameAreReadThroughTheTranslatedText() {
        R2dbcBinds b = new R2dbcBinds();
        b.bind(0, 7L);
        b.bind("$2", 9);
        b.readAs(NumberedParameters.of("select pg_try_advisory_lock($2, $1)"));
        assertEquals("setObject", b.method(1));
        assertEquals(9, b.arg(1, 0), "the first ? is $2");
        assertEquals(7L, b.arg(2, 0));
        assertNull(b.arg(1, 1), "no target SQL type: the value's own");
        assertNull(b.method(3));
    }

    @Test
    void nullsAreTheirTypesNulls() {
        R2dbcBinds b = new R2dbcBinds();
        b.bindNull(0, Long.class);
        b.bindNull("$2", Integer.class);
        b.bindNull(2, String.class);
        b.readAs(NumberedParameters.of("select $1, $2, $3"));
        assertEquals("setNull", b.method(1));
        assertEquals(Types.BIGINT, b.arg(1, 0));
        assertEquals(Types.INTEGER, b.arg(2, 0));
        assertEquals(Types.VARCHAR, b.arg(3, 0), "a text NULL: resolving the function is the server's");
    }

    @Test
    void aLaterBindReplacesAnEarlierOne() {
        R2dbcBinds b = new R2dbcBinds();
        b.bindNull(0, Long.class);
        b.bind(0, 5L);
        b.readAs(NumberedParameters.of("select $1"));
        assertEquals("setObject", b.method(1));
        assertEquals(5L, b.arg(1, 0));
    }

    @Test
    void aValueThenANullAndBindsPastTheFirstOnesAreKeptByTheirDollar() {
        R2dbcBinds b = new R2dbcBinds();
        b.bind(0, 5L);
        b.bindNull(0, Integer.class);
        b.bind("$7", "seven");
        b.bind(2, 3);
        b.readAs(NumberedParameters.of("select $1, $2, $3, $7"));
        assertEquals("setNull", b.method(1), "a NULL after a value replaces it");
        assertEquals(Types.INTEGER, b.arg(1, 0));
        assertNull(b.method(2), "never bound");
        assertEquals(3, b.arg(3, 0));
        assertEquals("seven", b.arg(4, 0), "$7, past the others");
        assertEquals("r2dbc|null:java.lang.Integer|-|java.lang.Integer:1:3|java.lang.String:5:seven",
                b.valueSignature(new int[] {1, 2, 3, 4}));
    }

    @Test
    void theLockTableReadsIntegerKeysAndLeavesTextToTheServer() {
        LockShape shape = ShapeParser.parse(NumberedParameters.of("select pg_try_advisory_lock($1)").jdbcText);
        R2dbcBinds longKey = new R2dbcBinds();
        longKey.bind(0, 42L);
        assertEquals(42L, KeyValues.resolve(shape.calls().get(0).args().get(0), false,
                longKey.readAs(NumberedParameters.of("select pg_try_advisory_lock($1)"))).value());
        R2dbcBinds textKey = new R2dbcBinds();
        textKey.bind(0, "42");
        assertNull(KeyValues.resolve(shape.calls().get(0).args().get(0), false,
                textKey.readAs(NumberedParameters.of("select pg_try_advisory_lock($1)"))));
    }

    private static List<String> sent(R2dbcBinds b) {
        List<String> calls = new ArrayList<>();
        Statement recorder = (Statement) Proxy.newProxyInstance(R2dbcBindsTest.class.getClassLoader(),
                new Class<?>[] {Statement.class}, (proxy, m, args) -> {
                    calls.add(m.getName() + java.util.Arrays.toString(args));
                    return proxy;
                });
        b.applyTo(recorder);
        return calls;
    }

    @Test
    void theSentStatementGetsEachDollarAsItWasLastBound() {
        R2dbcBinds b = new R2dbcBinds();
        assertTrue(b.isEmpty());
        b.bind(0, 1L);
        b.bind("$2", "x");
        b.bindNull(2, Long.class);
        assertFalse(b.isEmpty());
        assertEquals(List.of("bind[0, 1]", "bind[$2, x]", "bindNull[2, class java.lang.Long]"), sent(b));
        R2dbcBinds again = new R2dbcBinds();
        again.bind(1, "by index");
        again.bind("$2", "then by name");
        again.bind("$1", "by name");
        again.bindNull(0, Integer.class);
        assertEquals(List.of("bindNull[0, class java.lang.Integer]", "bind[$2, then by name]"), sent(again),
                "the last bind of each $n, as the application made it");
    }

    @Test
    void callsTheDriverRefusesAreSentForItsOwnError() {
        R2dbcBinds b = new R2dbcBinds();
        b.bind("name", 1);
        b.bind(-1, 2);
        b.bind(0, 3);
        assertFalse(b.isEmpty());
        assertEquals(List.of("bind[0, 3]", "bind[name, 1]", "bind[-1, 2]"), sent(b));
        assertEquals("setObject", b.readAs(NumberedParameters.of("select $1")).method(1));
    }
}
