package io.lockhygiene.it.migrators;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;

import liquibase.Liquibase;
import liquibase.database.Database;
import liquibase.database.DatabaseFactory;
import liquibase.database.jvm.JdbcConnection;
import liquibase.resource.ClassLoaderResourceAccessor;

/**
 * One migrator process (a service starting): Liquibase with liquibase-sessionlock on its class path runs the
 * slow changelog on a schema, once "GO" arrives on standard input, and prints "RESULT ok" or
 * "RESULT failed error". Arguments: url user password schema.
 */
public final class LiquibaseMigratorMain {
    private LiquibaseMigratorMain() {
    }

    @SuppressWarnings("deprecation")
    public static void main(String[] args) throws Exception {
        System.setProperty("liquibase.changelogLockPollRate", "1"); // seconds between a waiting migrator's tries
        System.setProperty("liquibase.changelogLockWaitTimeInMinutes", "1"); // then it gives up (5 by default)
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        System.out.println("READY");
        System.out.flush();
        in.readLine(); // GO
        String error = null;
        try (Connection c = DriverManager.getConnection(args[0], args[1], args[2])) {
            Database db = DatabaseFactory.getInstance().findCorrectDatabaseImplementation(new JdbcConnection(c));
            db.setDefaultSchemaName(args[3]);
            try (Liquibase liquibase = new Liquibase("liquibase/slow-changelog.xml", new ClassLoaderResourceAccessor(), db)) {
                liquibase.update("");
            }
        } catch (Exception e) {
            error = e.getClass().getSimpleName() + ": " + e.getMessage();
        }
        System.out.println("RESULT " + (error == null ? "ok" : "failed " + error.replace('\n', ' ')));
    }
}
