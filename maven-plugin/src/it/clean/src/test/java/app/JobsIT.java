package app;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** A job that holds its lock for its transaction only: nothing for lockhygiene:verify to report. */
class JobsIT {
    @Test
    void theJobLocksForItsTransaction() throws Exception {
        try (TestBed bed = TestBed.start()) {
            String url = bed.url(Route.DIRECT).replace("jdbc:postgresql:", "jdbc:lockhygiene:postgresql:");
            try (Connection c = DriverManager.getConnection(url, bed.endpoints().user(), bed.endpoints().password());
                 Statement s = c.createStatement()) {
                c.setAutoCommit(false);
                try (ResultSet rs = s.executeQuery("SELECT pg_try_advisory_xact_lock(7742, hashtext('report-daily'))")) {
                    assertTrue(rs.next() && rs.getBoolean(1));
                }
                c.commit();
            }
        }
    }
}
