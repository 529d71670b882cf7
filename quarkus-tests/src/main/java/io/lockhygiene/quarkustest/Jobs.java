package io.lockhygiene.quarkustest;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;

import javax.sql.DataSource;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

/**
 * A job guarded the way borrow-per-call code guards it (JdbcTemplate-style: each call borrows a connection of
 * its own from the pool): try the lock, do the job (a 20 ms statement and a row), unlock.
 */
@ApplicationScoped
public class Jobs {
    @Inject
    DataSource dataSource;

    public boolean tryLock(long key) throws Exception {
        return bool("SELECT pg_try_advisory_lock(" + key + ")");
    }

    public void job() throws Exception {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("SELECT pg_sleep(0.02)");
            s.execute("INSERT INTO quarkus_jobs DEFAULT VALUES");
        }
    }

    public boolean unlock(long key) throws Exception {
        return bool("SELECT pg_advisory_unlock(" + key + ")");
    }

    private boolean bool(String sql) throws Exception {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getBoolean(1);
        }
    }
}
