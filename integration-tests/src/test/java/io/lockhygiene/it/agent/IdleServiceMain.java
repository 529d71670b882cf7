package io.lockhygiene.it.agent;

import static io.lockhygiene.it.bed.Sql.bool;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

/**
 * An unchanged pooled service that runs a burst of own-key jobs, idles, then runs another: Args URL USER PASSWORD
 * KEY. Prints {@code IDLE jobs=N} after the first burst, waits for a line on stdin, then {@code RESULT jobs=N}.
 */
public final class IdleServiceMain {
    public static void main(String[] args) throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(args[0]);
        config.setUsername(args[1]);
        config.setPassword(args[2]);
        config.setMaximumPoolSize(2);
        try (HikariDataSource ds = new HikariDataSource(config)) {
            System.out.println("IDLE jobs=" + burst(ds, Long.parseLong(args[3])));
            System.out.flush();
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            System.out.println("RESULT jobs=" + burst(ds, Long.parseLong(args[3])));
        }
    }

    private static int burst(HikariDataSource ds, long key) throws Exception {
        int jobs = 0;
        for (int i = 0; i < 20; i++) {
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                if (bool(s, "SELECT pg_try_advisory_lock(" + key + ")")) {
                    jobs++;
                    bool(s, "SELECT pg_advisory_unlock(" + key + ")");
                }
            }
        }
        return jobs;
    }


    private IdleServiceMain() {
    }
}
