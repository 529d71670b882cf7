package io.lockhygiene.internal.holder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

import io.lockhygiene.internal.sql.Seals;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A holder session opened on a server that cannot say where its lock table keeps a lock (here: a role that may not
 * run {@code hashtext}, as on a PostgreSQL-compatible server without it) opens as before, with a seal anywhere,
 * dedicated and through the application's route; the control, the same role allowed {@code hashtext}, learns and
 * places its seal in the first partition. In the holder's package, to give a link its endpoint's placement.
 */
@ExtendWith(TestBedExtension.class)
class OpeningWithoutHashtextTest {
    private static final String ROLE = "lh_without_hashtext";
    private static final String PASSWORD = "lh-without-hashtext-pw";
    private final TestBed bed = TestBed.shared();

    private void admin(String sql) throws SQLException {
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private Connection asRole() throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", ROLE);
        p.setProperty("password", PASSWORD);
        return DriverManager.getConnection(bed.url(Route.DIRECT), p);
    }

    private static boolean holdsSeal(Connection c, int seal) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_locks WHERE"
                + " locktype = 'advisory' AND objsubid = 2 AND granted AND pid = pg_backend_pid() AND objid::text = '"
                + Integer.toUnsignedString(seal) + "'")) {
            rs.next();
            return rs.getInt(1) == 1;
        }
    }

    @Test
    void aServerThatCannotSayWhereStillOpensAHolderSession() throws Exception {
        admin("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '" + ROLE + "') THEN CREATE ROLE " + ROLE
                + " LOGIN PASSWORD '" + PASSWORD + "'; END IF; END $$");
        try {
            // the control: allowed, the first session learns and places the seal in partition 0
            SealPlacement control = new SealPlacement();
            JdbcHolderLink placed = JdbcHolderLink.of(asRole(), true, control, "control");
            try {
                assertTrue(control.learned());
                assertNotEquals(0, placed.seal());
                int oid;
                try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement();
                     ResultSet rs = s.executeQuery("SELECT oid::text::bigint FROM pg_database WHERE datname = current_database()")) {
                    rs.next();
                    oid = (int) rs.getLong(1);
                }
                assertEquals(0, Seals.lockPartition(oid, Seals.CLASSID, placed.seal()), "placed");
            } finally {
                placed.close();
            }

            admin("REVOKE EXECUTE ON FUNCTION pg_catalog.hashtext(text) FROM PUBLIC");
            for (boolean dedicated : new boolean[] {true, false}) {
                SealPlacement placement = new SealPlacement();
                Connection c = asRole();
                JdbcHolderLink link = JdbcHolderLink.of(c, dedicated, placement, "no hashtext");
                try {
                    assertTrue(placement.learned(), "learned that it cannot learn: not asked again");
                    assertTrue(link.backendPid() > 0);
                    if (dedicated) {
                        assertNotEquals(0, link.seal(), "a dedicated session still takes its seal");
                        assertTrue(holdsSeal(c, link.seal()));
                    } else {
                        assertEquals(1, Integer.parseInt(link.query("SELECT 1", 1)[0]),
                                "through the application's route the session is usable: its failed question rolled back");
                    }
                    assertNotEquals(0, link.newSeal(), "seals anywhere");
                } finally {
                    link.close();
                }
            }
        } finally {
            admin("GRANT EXECUTE ON FUNCTION pg_catalog.hashtext(text) TO PUBLIC");
        }
    }
}
