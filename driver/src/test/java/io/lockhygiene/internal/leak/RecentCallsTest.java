package io.lockhygiene.internal.leak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lockhygiene.internal.leak.RecentCalls.LockCall;
import io.lockhygiene.internal.sql.AdvisoryFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Issue 14, item 5: attribution memory is bounded and says what it dropped. */
class RecentCallsTest {

    private static LockCall call(long key) {
        return new LockCall(AdvisoryFunction.LOCK, "SELECT pg_advisory_lock(" + key + ")", Long.toString(key), null);
    }

    @Test
    void keepsTheMostRecentAndCountsTheRest() {
        RecentCalls calls = new RecentCalls();
        for (long k = 0; k < 1_000_000; k++) {
            calls.add(call(k));
        }
        assertEquals(RecentCalls.MAX, calls.list().size());
        assertEquals(1_000_000 - RecentCalls.MAX, calls.dropped());
        assertEquals("999999", calls.list().get(RecentCalls.MAX - 1).argumentText());
        assertSame(calls.list().get(RecentCalls.MAX - 1),
                Attribution.takerOf(new HeldLock(0, 999_999, 1, "ExclusiveLock", 1), calls.list()));
        calls.clear();
        assertTrue(calls.isEmpty());
        assertEquals(0, calls.dropped());
    }

    @Test
    void addLastTakesTheTail() {
        RecentCalls from = new RecentCalls();
        for (long k = 0; k < 5; k++) {
            from.add(call(k));
        }
        RecentCalls to = new RecentCalls();
        to.addLast(from, 2);
        assertEquals(2, to.list().size());
        assertEquals("3", to.list().get(0).argumentText());
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', quoteCharacter = '~', value = {
            "42              | true",
            "-7              | true",
            "1, 2            | true",
            "~ 1 ,2 ~        | true",
            "9223372036854775807  | true",
            "9223372036854775808  | false",
            "$1              | false",
            "hashtext('a')   | false",
            "1,              | false",
            "~~              | false",
    })
    void onlyIntegerLiteralArgumentsAreMatchedExactly(String argumentText, boolean literal) {
        assertEquals(literal, LockCall.isLiteral(argumentText));
    }
}
