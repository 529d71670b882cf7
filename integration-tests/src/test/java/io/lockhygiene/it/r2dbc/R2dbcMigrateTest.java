package io.lockhygiene.it.r2dbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import io.r2dbc.spi.ConnectionFactory;
import name.nkonev.r2dbc.migrate.core.R2dbcMigrate;
import name.nkonev.r2dbc.migrate.core.R2dbcMigrateProperties;
import name.nkonev.r2dbc.migrate.reader.MigrateResource;
import name.nkonev.r2dbc.migrate.reader.MigrateResourceReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * r2dbc-migrate 2.11, four migrators at once through the transaction pooler, its default lock
 * ({@code select pg_try_advisory_lock($1, $2)} in a transaction of its own, migrations in transactions of their
 * own, {@code pg_advisory_unlock($1, $2)}). Plain r2dbc-postgresql shows the bug (the lock stays on a pooled
 * server, so a migrator whose try lands there gets it too: a migration applied twice, a migrator that fails,
 * an unlock that finds nothing, a lock left); direct PostgreSQL is the reference. Through LockHygiene the mode is
 * {@code emulate}: {@code rewrite} cannot hold these semantics, since the lock is taken in a transaction that
 * commits before the migrations run (an xact lock would end with it and let every migrator in).
 */
@ExtendWith({TestBedExtension.class, BlockHoundExtension.class})
class R2dbcMigrateTest {
    private static final int MIGRATORS = 4;
    private final TestBed bed = TestBed.shared();

    /** What the migrators did: how many succeeded, how often each migration ran, locks left. */
    record Outcome(int succeeded, List<String> errors, int rowsInTarget, int migrationsRecorded, int locksLeft) {
    }

    private Outcome migrate(String run, ConnectionFactory cf) throws Exception {
        String target = "lh_r2dbc_" + run + "_items";
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + target);
            s.execute("DROP TABLE IF EXISTS lh_r2dbc_" + run + "_migrations");
            // r2dbc-migrate creates its table with "create table if not exists" from every migrator at once, which
            // can race in PostgreSQL itself (pg_type's unique index): made once here, the same for every run
            s.execute("create table lh_r2dbc_" + run + "_migrations(id int primary key, description text)");
        }
        R2dbcMigrateProperties properties = new R2dbcMigrateProperties();
        properties.setResourcesPath("inline");
        properties.setMigrationsTable("lh_r2dbc_" + run + "_migrations");
        properties.setMigrationsLockTable("lh_r2dbc_" + run + "_lock"); // the lock key: its own per run
        properties.setAcquireLockRetryDelay(Duration.ofMillis(100));
        properties.setAcquireLockMaxRetries(100);
        properties.setWaitForDatabase(false);
        MigrateResourceReader reader = path -> List.of(
                resource("V1__create_items.sql", "create table " + target + " (id int primary key, note text)"),
                resource("V2__first_item.sql", "insert into " + target + " values (1, 'first'); select pg_sleep(0.2)"),
                resource("V3__second_item.sql", "insert into " + target + " values (2, 'second')"));
        List<String> errors = new ArrayList<>();
        long succeeded = Flux.range(0, MIGRATORS)
                .flatMap(i -> R2dbcMigrate.migrate(cf, properties, reader, null, null)
                        .thenReturn(Boolean.TRUE)
                        .onErrorResume(e -> {
                            synchronized (errors) {
                                errors.add(e.getClass().getSimpleName() + ": " + e.getMessage());
                            }
                            return Mono.just(Boolean.FALSE);
                        }), MIGRATORS)
                .filter(Boolean::booleanValue)
                .count()
                .block(Duration.ofSeconds(120));
        int rows;
        int recorded;
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement()) {
            rows = count(s, "SELECT count(*) FROM " + target);
            recorded = count(s, "SELECT count(*) FROM lh_r2dbc_" + run + "_migrations");
        }
        int left = bed.admin().heldAdvisoryLocks().stream().filter(l -> l.key() == -1).collect(Collectors.toList()).size();
        for (var l : bed.admin().heldAdvisoryLocks()) {
            bed.admin().terminateHoldersOf(l.key());
        }
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement()) {
            s.execute("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2"
                    + " AND classid <> " + io.lockhygiene.internal.sql.Seals.CLASSID + " AND pid <> pg_backend_pid()");
        }
        return new Outcome((int) succeeded, errors, rows, recorded, left);
    }

    private static int count(Statement s, String sql) {
        try (ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getInt(1);
        } catch (java.sql.SQLException e) {
            return -1; // the table was never made
        }
    }

    private static MigrateResource resource(String name, String sql) {
        return new MigrateResource() {
            @Override
            public boolean isReadable() {
                return true;
            }

            @Override
            public InputStream getInputStream() {
                return new ByteArrayInputStream(sql.getBytes(StandardCharsets.UTF_8));
            }

            @Override
            public String getFilename() {
                return name;
            }
        };
    }

    @Test
    void fourMigratorsApplyEachMigrationOnceUnderEmulate() throws Exception {
        Outcome direct = migrate("direct", R2dbcRoutes.plain(bed, Route.DIRECT));
        Outcome plain = migrate("plain", R2dbcRoutes.plain(bed, Route.TRANSACTION_POOL));
        Outcome ours = migrate("emulate", R2dbcRoutes.guarded(bed, Route.TRANSACTION_POOL, "lockhygiene.mode=emulate"));
        Outcome oursPrepared = migrate("prepared", R2dbcRoutes.guarded(bed, Route.PREPARED_TRANSACTION_POOL,
                "lockhygiene.mode=emulate"));
        System.out.println("[r2dbc-migrate, " + MIGRATORS + " migrators] direct: " + direct + "\n  plain through the pooler: "
                + plain + "\n  emulate: " + ours + "\n  emulate through PgBouncer >= 1.21: " + oursPrepared);
        assertEquals(new Outcome(MIGRATORS, List.of(), 2, 3, 0), direct, "the reference");
        assertTrue(plain.succeeded() < MIGRATORS || plain.locksLeft() > 0 || plain.rowsInTarget() != 2,
                "control: plain r2dbc-postgresql through the pooler shows the bug: " + plain);
        assertEquals(new Outcome(MIGRATORS, List.of(), 2, 3, 0), ours, "emulate: every migrator succeeds, each migration once");
        assertEquals(new Outcome(MIGRATORS, List.of(), 2, 3, 0), oursPrepared);
    }
}
