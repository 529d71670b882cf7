package io.lockhygiene.internal.session;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.lockhygiene.internal.sql.SqlScanner;
import io.lockhygiene.settings.Settings;

/**
 * The SKIP LOCKED trap's core, every front end's, without a server: what it asks the front end to read, and its
 * verdict from the answers (the integration tests run it through JDBC and R2DBC against PostgreSQL).
 */
class SkipLockedCheckTest {
    private static final String PINNED = "SELECT * FROM skc_jobs WHERE job_key = 'daily' FOR UPDATE SKIP LOCKED";
    private static final String CLAIM = "SELECT * FROM skc_jobs WHERE status = 'new' LIMIT 10 FOR UPDATE SKIP LOCKED";

    private static SkipLockedCheck check(Settings.SkipLocked mode, String scope) {
        OwnerSession session = new OwnerSession(Settings.builder().skipLocked(mode).build(), "lh-test",
                (io.lockhygiene.internal.holder.Holder) null, null);
        SkipLockedCheck check = session.skipLockedCheck(SqlScanner.scan(PINNED));
        assertNotNull(check);
        assertSame(check, session.skipLockedCheck(SqlScanner.scan(CLAIM)), "one per connection");
        check.scopeRead(scope);
        return check;
    }

    @Test
    void noCheckWithoutSkipLockedOrWhenOff() {
        OwnerSession session = new OwnerSession(Settings.builder().build(), "lh-test",
                (io.lockhygiene.internal.holder.Holder) null, null);
        assertNull(session.skipLockedCheck(SqlScanner.scan("SELECT * FROM skc_jobs FOR UPDATE")));
        OwnerSession off = new OwnerSession(Settings.builder().skipLocked(Settings.SkipLocked.OFF).build(), "lh-test",
                (io.lockhygiene.internal.holder.Holder) null, null);
        assertNull(off.skipLockedCheck(SqlScanner.scan(PINNED)));
    }

    @Test
    void asksForTheTablesKeysOnceThenRefusesUnderStrict() {
        SkipLockedCheck c = check(Settings.SkipLocked.STRICT, "test:1/a?public");
        assertEquals("skc_jobs", c.keysToRead(PINNED));
        assertDoesNotThrow(() -> c.check(PINNED, null), "no verdict before the keys are read: it passes");
        c.keysRead("skc_jobs", List.of(new String[] {"id"}, new String[] {"job_key"}));
        assertNull(c.keysToRead(PINNED), "read once per table and scope");
        SQLException e = assertThrows(SQLException.class, () -> c.check(PINNED, null));
        assertEquals("0A000", e.getSQLState());
        assertTrue(e.getMessage().contains("[job_key]") && e.getMessage().contains("NOWAIT"), e.getMessage());
        assertDoesNotThrow(() -> c.check(CLAIM, null), "a claim over many rows is what SKIP LOCKED is for");
    }

    @Test
    void keysAreKeptPerScope() {
        SkipLockedCheck a = check(Settings.SkipLocked.STRICT, "test:1/a?keyed");
        a.keysRead("skc_jobs", List.<String[]>of(new String[] {"job_key"}));
        SkipLockedCheck b = check(Settings.SkipLocked.STRICT, "test:1/a?unkeyed");
        assertEquals("skc_jobs", b.keysToRead(PINNED), "another search_path: another table");
        b.keysRead("skc_jobs", List.of());
        assertThrows(SQLException.class, () -> a.check(PINNED, null));
        assertDoesNotThrow(() -> b.check(PINNED, null), "no unique key there");
    }

    @Test
    void warnSaysAndGoesOnAndAnUnreadCatalogPasses() {
        SkipLockedCheck w = check(Settings.SkipLocked.WARN, "test:1/b?public");
        w.keysRead("skc_jobs", List.<String[]>of(new String[] {"job_key"}));
        assertDoesNotThrow(() -> w.check(PINNED, null));
        SkipLockedCheck s = check(Settings.SkipLocked.STRICT, "test:1/c?public");
        s.keysUnread("skc_jobs", new SQLException("permission denied for table pg_index", "42501"));
        assertDoesNotThrow(() -> s.check(PINNED, null), "nothing guessed");
        SkipLockedCheck noScope = new OwnerSession(Settings.builder().skipLocked(Settings.SkipLocked.STRICT).build(),
                "lh-test", (io.lockhygiene.internal.holder.Holder) null, null).skipLockedCheck(SqlScanner.scan(PINNED));
        assertNull(noScope.keysToRead(PINNED), "the scope is asked first");
        assertDoesNotThrow(() -> noScope.check(PINNED, null));
    }
}
