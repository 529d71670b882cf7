package io.lockhygiene.it.driver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import org.junit.jupiter.api.Test;
import org.postgresql.PGStatement;

/**
 * The driver's contract of {@link TransactionPoolingDriverTest}, every mode with its plain-pgjdbc control,
 * through a PgBouncer of 1.21 or later with {@code max_prepared_statements} on and pgjdbc's default
 * {@code prepareThreshold} (named server-side statements after five executions): no {@code prepareThreshold=0}.
 */
class PreparedPoolDriverTest extends TransactionPoolingDriverTest {
    @Override
    Route route() {
        return Route.PREPARED_TRANSACTION_POOL;
    }

    /** The route really runs named server-side statements, under LockHygiene too, and they answer. */
    @Test
    void statementsAreServerPreparedThroughThisPooler() throws Exception {
        TestBed bed = TestBed.shared();
        assertTrue(bed.preparedPoolVersion().matches("PgBouncer 1\\.(2[1-9]|[3-9][0-9]).*"), bed.preparedPoolVersion());
        assertFalse(bed.url(route()).contains("prepareThreshold"), "pgjdbc's default prepareThreshold");
        for (Connection c : new Connection[] {bed.connect(route()), bed.connectLockHygiene(route(), "lockhygiene.mode=emulate")}) {
            try (c; PreparedStatement ps = c.prepareStatement("SELECT ?::int + 1")) {
                for (int i = 0; i < 8; i++) {
                    ps.setInt(1, i);
                    try (ResultSet rs = ps.executeQuery()) {
                        assertTrue(rs.next());
                        assertEquals(i + 1, rs.getInt(1));
                    }
                }
                assertTrue(ps.unwrap(PGStatement.class).isUseServerPrepare(), "a named server-side statement by now");
            }
        }
    }
}
