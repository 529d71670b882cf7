package io.lockhygiene;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Driver;
import java.sql.DriverManager;
import java.util.Collections;
import java.util.Properties;

import org.junit.jupiter.api.Test;

/** The pool's driver takes PostgreSQL's plain URLs and ours, nothing else, and never sits in DriverManager. */
class LockHygienePoolDriverTest {
    private final LockHygienePoolDriver driver = new LockHygienePoolDriver();

    @Test
    void acceptsPlainAndOurPostgresqlUrlsOnly() throws Exception {
        assertTrue(driver.acceptsURL("jdbc:postgresql://db:6432/app"));
        assertTrue(driver.acceptsURL("jdbc:lockhygiene:postgresql://db:6432/app"));
        assertFalse(driver.acceptsURL("jdbc:h2:mem:x"));
        assertFalse(driver.acceptsURL(null));
        assertNull(driver.connect("jdbc:h2:mem:x", new Properties()), "not ours: null, per the Driver contract");
    }

    @Test
    void isNeverRegisteredWithDriverManager() {
        for (Driver d : Collections.list(DriverManager.getDrivers())) {
            assertFalse(d instanceof LockHygienePoolDriver, "registered: plain URLs elsewhere would be ours");
        }
    }

    @Test
    void aReturnOfSomethingElseIsIgnored() {
        LockHygienePoolDriver.returned(null); // a pool's return path never fails because of us
    }
}
