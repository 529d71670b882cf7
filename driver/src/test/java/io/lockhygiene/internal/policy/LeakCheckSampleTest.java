package io.lockhygiene.internal.policy;

import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import io.lockhygiene.internal.sql.SqlScanner;
import io.lockhygiene.settings.Settings;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LeakCheckSampleTest {
    @Test
    void takesAboutRateOfTheEndsWithIrregularGaps() {
        SplittableRandom random = new SplittableRandom(42);
        LeakCheckSample sample = new LeakCheckSample(0.01, random::nextDouble);
        int taken = 0;
        int ends = 1_000_000;
        java.util.Set<Integer> gaps = new java.util.HashSet<>();
        int last = 0;
        for (int i = 1; i <= ends; i++) {
            if (sample.next()) {
                taken++;
                gaps.add(i - last);
                last = i;
            }
        }
        assertTrue(taken > 9_500 && taken < 10_500, "taken " + taken);
        assertTrue(gaps.size() > 100, "gaps vary: " + gaps.size());
    }

    @Test
    void rateOneTakesEveryEndAndZeroOrOtherLeakChecksTakeNone() {
        LeakCheckSample all = new LeakCheckSample(1, () -> 0.5);
        for (int i = 0; i < 10; i++) {
            assertTrue(all.next());
        }
        assertNull(LeakCheckSample.of(Settings.DEFAULTS.toBuilder().leakCheckSample(0).build()));
        Settings always = Settings.builder().leakCheck(Settings.LeakCheck.ALWAYS).build();
        assertNull(LeakCheckSample.of(always), "always checks every end already");
        Settings off = Settings.builder().mode(Settings.Mode.OFF).build();
        assertNull(LeakCheckSample.of(off));
        assertTrue(LeakCheckSample.of(Settings.DEFAULTS) != null, "on by default");
        assertEquals(0.005, Settings.DEFAULTS.leakCheckSample());
    }

    @Test
    void aSampledEndIsDueOnlyAtTransactionEnds() {
        assertTrue(LockPolicy.checkDue(LockPolicy.CheckPoint.TRANSACTION_END, Settings.LeakCheck.TRACKED, false, true, true));
        assertFalse(LockPolicy.checkDue(LockPolicy.CheckPoint.TRANSACTION_END, Settings.LeakCheck.TRACKED, false, true, false));
        assertFalse(LockPolicy.checkDue(LockPolicy.CheckPoint.RETURN, Settings.LeakCheck.TRACKED, false, false, true),
                "at a return the check would be a round trip of its own");
        assertFalse(LockPolicy.checkDue(LockPolicy.CheckPoint.TRANSACTION_END, Settings.LeakCheck.NEVER, false, true, true));
    }

    @Test
    void onlyStatementsThatRunAsTheyWouldAloneAreWrapped() {
        for (String yes : new String[] {"SELECT 1", "  select * from t;", "/* c */ -- x\n UPDATE t SET a = 1",
                "(SELECT 1) UNION (SELECT 2)", "WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x", "values (1)",
                "DELETE FROM t ;  ", "select ';'", "select $$;$$ -- ;", "SELECT /* a /* ; */ b */ 1",
                "select 1; -- a trailing comment"}) {
            assertTrue(SqlScanner.runsInTransactionBlockAsAlone(yes), yes);
        }
        for (String no : new String[] {"VACUUM t", "CREATE INDEX CONCURRENTLY i ON t (a)", "CALL p()", "BEGIN",
                "COMMIT", "SELECT 1; VACUUM", "select 1;;", "select 'x", "select \"x", "", "/* unterminated SELECT 1", "ALTER SYSTEM SET x = 1",
                "SET search_path = x", "DO $$ BEGIN END $$", null}) {
            assertFalse(SqlScanner.runsInTransactionBlockAsAlone(no), String.valueOf(no));
        }
    }
}
