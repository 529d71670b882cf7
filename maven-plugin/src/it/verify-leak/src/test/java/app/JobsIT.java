package app;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The seed's bug: a job takes a session-level lock and returns without unlocking it. The test itself passes
 * (as such tests do); LockHygiene releases the lock when the connection is closed and reports it, and
 * lockhygiene:verify fails the build on that report.
 */
class JobsIT {
    @Test
    void theJobForgetsToUnlock() throws Exception {
        try (TestBed bed = TestBed.start()) {
            String url = bed.url(Route.DIRECT).replace("jdbc:postgresql:", "jdbc:lockhygiene:postgresql:");
            try (Connection c = DriverManager.getConnection(url, bed.endpoints().user(), bed.endpoints().password());
                 Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT pg_try_advisory_lock(4242)")) {
                assertTrue(rs.next() && rs.getBoolean(1));
            }
        }
    }
}
