package io.lockhygiene.it.semantics;

import java.sql.Connection;
import java.sql.DriverManager;

/**
 * A child JVM's whole program: PostgreSQL's advisory_lock.sql through a plain {@code jdbc:postgresql:}
 * URL, one line per statement ("LINE ..."), for the agent's run of the regression file.
 */
public final class RegressionFileMain {
    private RegressionFileMain() {
    }

    public static void main(String[] args) throws Exception {
        try (Connection c = DriverManager.getConnection(args[0], args[1], args[2])) {
            System.out.println("GUARDED " + c.getClass().getName());
            for (String line : AdvisoryRegressionFileTest.run(c, AdvisoryRegressionFileTest.Style.valueOf(args[3]))) {
                System.out.println("LINE " + line);
            }
        }
    }
}
