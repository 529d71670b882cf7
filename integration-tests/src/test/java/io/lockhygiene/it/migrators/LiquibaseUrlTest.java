package io.lockhygiene.it.migrators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import liquibase.Liquibase;
import liquibase.database.Database;
import liquibase.database.DatabaseFactory;
import liquibase.database.core.PostgresDatabase;
import liquibase.database.jvm.JdbcConnection;
import liquibase.resource.ClassLoaderResourceAccessor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 16: Liquibase 4.33 through a {@code jdbc:lockhygiene:} URL. Liquibase recognises PostgreSQL by the
 * connection's product name, which is pgjdbc's, so a connection from our driver is a PostgreSQL
 * database to it; its lock is a table row (DATABASECHANGELOGLOCK), not an advisory lock.
 */
@ExtendWith(TestBedExtension.class)
class LiquibaseUrlTest {
    private final TestBed bed = TestBed.shared();

    @SuppressWarnings("deprecation") // Liquibase.update(String) is the shortest call that runs a changelog
    @Test
    void aChangelogRunsThroughALockHygieneUrlAndTheTransactionPooler() throws Exception {
        String url = bed.lockHygieneUrl(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
        try (Connection setup = bed.connect(Route.DIRECT); Statement s = setup.createStatement()) {
            s.execute("DROP SCHEMA IF EXISTS lb_url CASCADE");
            s.execute("CREATE SCHEMA lb_url");
        }
        for (int run = 0; run < 2; run++) { // the second run finds everything applied
            try (Connection c = DriverManager.getConnection(url, bed.credentials())) {
                assertTrue(c.isWrapperFor(io.lockhygiene.internal.jdbc.LockHygieneConnection.class), "our driver's connection");
                Database db = DatabaseFactory.getInstance().findCorrectDatabaseImplementation(new JdbcConnection(c));
                assertTrue(db instanceof PostgresDatabase, "Liquibase takes it for PostgreSQL: " + db.getClass());
                db.setDefaultSchemaName("lb_url");
                try (Liquibase liquibase = new Liquibase("liquibase/changelog.xml", new ClassLoaderResourceAccessor(), db)) {
                    liquibase.update("");
                }
            }
        }
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT (SELECT count(*) FROM lb_url.lb_applied_once),"
                     + " (SELECT count(*) FROM lb_url.databasechangelog)")) {
            rs.next();
            assertEquals(1, rs.getInt(1), "the insert ran once");
            assertEquals(2, rs.getInt(2), "both change sets recorded once");
        }
        assertEquals(java.util.List.of(), bed.admin().heldAdvisoryLocks(), "no lock left behind");
    }
}
