package io.lockhygiene.internal.leak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

/** The key text an acquire and its unlock are matched by: whitespace gone, nothing else touched. */
class UnlockWatchTest {
    @Test
    void normalDropsWhitespaceAndKeepsTheSameStringWhenThereIsNone() {
        String plain = "7742,hashtext('report-daily')";
        assertSame(plain, UnlockWatch.normal(plain), "no copy when there is nothing to drop");
        assertEquals(plain, UnlockWatch.normal(" 7742 ,\thashtext( 'report-daily' )\n"));
        assertEquals("", UnlockWatch.normal(" \t\r\n"));
        assertEquals("1,2", UnlockWatch.normal("1,\u000B2"));
    }
}
