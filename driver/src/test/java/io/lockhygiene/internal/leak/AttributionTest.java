package io.lockhygiene.internal.leak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import io.lockhygiene.internal.leak.RecentCalls.LockCall;
import io.lockhygiene.internal.sql.AdvisoryFunction;
import org.junit.jupiter.api.Test;

class AttributionTest {

    @Test
    void rebuildsKeysFromPgLocksColumns() {
        assertEquals("-1", new HeldLock(0xFFFFFFFFL, 0xFFFFFFFFL, 1, "ExclusiveLock", 1).key());
        assertEquals("4294967298", new HeldLock(1, 2, 1, "ExclusiveLock", 1).key());
        assertEquals("(7742, -5)", new HeldLock(7742, 0xFFFFFFFBL, 2, "ShareLock", 1).key());
        assertTrue(new HeldLock(0, 42, 1, "ExclusiveLock", 1).matchesLiteralArguments(" 42 "));
        assertTrue(new HeldLock(7742, 0xFFFFFFFBL, 2, "ShareLock", 1).matchesLiteralArguments("7742, -5"));
    }

    @Test
    void literalMatchWinsThenExpressionThenInherited() {
        LockCall literal = new LockCall(AdvisoryFunction.LOCK, "SELECT pg_advisory_lock(42)", "42", null);
        LockCall expr = new LockCall(AdvisoryFunction.TRY_LOCK, "SELECT pg_try_advisory_lock(hashtext('x'))", "hashtext('x')", null);
        List<LockCall> calls = List.of(expr, literal);
        assertSame(literal, Attribution.takerOf(new HeldLock(0, 42, 1, "ExclusiveLock", 1), calls));
        assertSame(expr, Attribution.takerOf(new HeldLock(0, 99, 1, "ExclusiveLock", 1), calls));
        assertNull(Attribution.takerOf(new HeldLock(0, 99, 1, "ShareLock", 1), calls));
        assertNull(Attribution.takerOf(new HeldLock(0, 42, 1, "ExclusiveLock", 1), List.of()));
        assertNull(Attribution.takerOf(new HeldLock(0, 1, 2, "ExclusiveLock", 1), List.of(literal)));
    }
}
