package io.lockhygiene.maven;

import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class EventLinesTest {
    @Test
    void readsTheDriversLines() {
        Map<String, String> e = EventLines.parse("{\"time\":\"2026-12-01T03:00:00Z\",\"type\":\"LEAK_RELEASED\",\"connection\":7,"
                + "\"function\":\"pg_advisory_lock\",\"key\":\"4242\",\"mode\":null,\"sql\":\"SELECT \\\"x\\\" \\u00e9\","
                + "\"message\":\"line\\none\",\"stack\":\"java.lang.Throwable\\n\\tat app.Jobs.run(Jobs.java:3)\"}");
        assertEquals("LEAK_RELEASED", e.get("type"));
        assertEquals("7", e.get("connection"));
        assertEquals("SELECT \"x\" \u00e9", e.get("sql"));
        assertEquals("line\none", e.get("message"));
        assertTrue(!e.containsKey("mode"));
        assertTrue(VerifyMojo.describe(e).contains("\n    at app.Jobs.run(Jobs.java:3)"), VerifyMojo.describe(e));
    }

    @Test
    void aCutOffOrForeignLineIsNull() {
        assertNull(EventLines.parse("{\"time\":\"2026-12-01T03:00:00Z\",\"type\":\"LEAK_REL"));
        assertNull(EventLines.parse("not json"));
        assertNull(EventLines.parse("{\"a\":}"));
        assertNull(EventLines.parse("{\"a\":\"\\u12\"}"));
        assertEquals(Map.of(), EventLines.parse(" {} "));
    }
}
