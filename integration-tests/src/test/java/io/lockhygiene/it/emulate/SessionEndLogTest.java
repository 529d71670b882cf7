package io.lockhygiene.it.emulate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 46: a connection that closes while it owns a session lock (a leader's lock, held for the life of the
 * process, ended by the pool's close at shutdown) ends the lock as PostgreSQL ends a session's locks, and says
 * so in one WARN line, not an ERROR with a stack. The server decides: the lock is free after the close, on
 * PostgreSQL itself (the control) as through the transaction pooler with the defaults.
 */
@ExtendWith(TestBedExtension.class)
class SessionEndLogTest {
    private final TestBed bed = TestBed.shared();

    @Test
    void aCloseEndsTheConnectionsLocksAsPostgresDoesWithOneWarnLine() throws Exception {
        long key = 46_046_001L;
        try (Connection direct = bed.connect(Route.DIRECT); Statement s = direct.createStatement()) {
            s.execute("SELECT pg_advisory_lock(" + key + ")");
        }
        assertTrue(bed.admin().awaitReleased(key, 5_000).isEmpty(), "PostgreSQL ends a session's locks with it");

        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL);
            try (Statement s = c.createStatement()) {
                s.execute("SELECT pg_advisory_lock(" + key + ")");
            }
            assertEquals(1, bed.admin().holdersOf(key).size(), "held by the lock holder until the close");
            c.close();
        } finally {
            System.setErr(err);
        }
        String log = captured.toString(StandardCharsets.UTF_8);
        System.out.println("[session end] logged:\n" + log);
        assertTrue(bed.admin().awaitReleased(key, 5_000).isEmpty(), "the close ended the lock");
        assertTrue(log.contains("WARN") && log.contains("ended with connection"), "one WARN says what happened:\n" + log);
        assertFalse(log.contains("ERROR"), "no ERROR for a lock its session's end releases:\n" + log);
        assertFalse(log.contains("\tat "), "no stack trace:\n" + log);
    }
}
