package io.lockhygiene.internal.lint;

import org.junit.jupiter.api.Test;

import io.lockhygiene.settings.Settings.SkipLocked;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** lockhygiene.skipLocked without JSqlParser: strict refuses the connection, warn and off go ahead. */
class SkipLockedParserTest {

    @Test
    void strictWithoutTheParserIsRefusedNamingTheDependency() {
        String refusal = SkipLockedLint.checkAtConnect(SkipLocked.STRICT, false);
        assertTrue(refusal.contains("com.github.jsqlparser:jsqlparser"), refusal);
        assertTrue(refusal.contains("lockhygiene.skipLocked=strict"), refusal);
    }

    @Test
    void warnAndOffDegradeAndAnAvailableParserIsFine() {
        assertNull(SkipLockedLint.checkAtConnect(SkipLocked.WARN, false));
        assertNull(SkipLockedLint.checkAtConnect(SkipLocked.OFF, false));
        assertNull(SkipLockedLint.checkAtConnect(SkipLocked.STRICT, true));
        assertTrue(SkipLockedLint.parserAvailable(), "the driver's tests have it");
    }
}
