package io.lockhygiene.it.fleet;

import static io.lockhygiene.it.bed.Sql.bool;

import java.sql.Connection;
import java.sql.Statement;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

/**
 * One replica of a pooled service with a realistic duty cycle: bursts of jobs, one job in ten guarded by its own
 * advisory lock held for 50 ms, idle gaps between bursts. Args: url user password key bursts gapMillis. Prints
 * {@code LOCKED <fromMillis> <toMillis>} (wall clock) for every lock it held, then {@code DONE jobs locked errors}.
 */
public final class DutyCycleServiceMain {
    public static void main(String[] args) throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(args[0]);
        config.setUsername(args[1]);
        config.setPassword(args[2]);
        config.setMaximumPoolSize(2);
        long key = Long.parseLong(args[3]);
        int bursts = Integer.parseInt(args[4]);
        long gap = Long.parseLong(args[5]);
        int jobs = 0;
        int locked = 0;
        int errors = 0;
        try (HikariDataSource ds = new HikariDataSource(config)) {
            for (int b = 0; b < bursts; b++) {
                for (int j = 0; j < 20; j++) {
                    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                        s.execute("SELECT 1");
                        if ((j + key) % 10 == 0) {
                            long from = System.currentTimeMillis();
                            if (bool(s, "SELECT pg_try_advisory_lock(" + key + ")")) {
                                s.execute("SELECT pg_sleep(0.05)");
                                if (!bool(s, "SELECT pg_advisory_unlock(" + key + ")")) {
                                    errors++;
                                }
                                locked++;
                                System.out.println("LOCKED " + from + " " + System.currentTimeMillis());
                            } else {
                                errors++; // its own key: never refused
                            }
                        }
                        jobs++;
                    } catch (Exception e) {
                        errors++;
                        System.out.println("ERROR " + e);
                    }
                }
                Thread.sleep(gap); // idle between bursts, its pool open
            }
        }
        System.out.println("DONE " + jobs + " " + locked + " " + errors);
    }


    private DutyCycleServiceMain() {
    }
}
