package io.lockhygiene.internal.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lockhygiene.settings.Settings;
import org.junit.jupiter.api.Test;

/** The one answer to "is a transaction pooler in between?" that JDBC and R2DBC both ask. */
class TransactionPoolingTest {
    private static Settings poolMode(Settings.PoolMode mode) {
        return Settings.builder().poolMode(mode).build();
    }

    @Test
    void poolModeAnswersWithoutAskingAndTheFrontEndsReasonComesFirst() {
        assertEquals(Boolean.TRUE, new TransactionPooling(poolMode(Settings.PoolMode.TRANSACTION), "c", false).known());
        assertEquals(Boolean.FALSE, new TransactionPooling(poolMode(Settings.PoolMode.SESSION), "c", false).known());
        assertEquals(Boolean.TRUE, new TransactionPooling(poolMode(Settings.PoolMode.SESSION), "c", true).known());
        assertNull(new TransactionPooling(poolMode(Settings.PoolMode.AUTO), "c", false).known());
    }

    @Test
    void untilTheServerAnswersEveryReaderAssumesAPooler() {
        TransactionPooling p = new TransactionPooling(poolMode(Settings.PoolMode.AUTO), "c", false);
        assertTrue(p.assumed());
        assertTrue(p.undetected("25P02"));
        assertNull(p.known(), "a failed question is asked again");
        assertFalse(p.detected(42, 42), "the pid the driver was announced is the backend's: direct");
        assertEquals(Boolean.FALSE, p.known());
        assertFalse(p.assumed());
    }

    @Test
    void anotherBackendOrAPidTheDriverDoesNotShowIsAPooler() {
        TransactionPooling p = new TransactionPooling(poolMode(Settings.PoolMode.AUTO), "c", false);
        assertTrue(p.detected(42, 43));
        assertEquals(Boolean.TRUE, p.known());
        TransactionPooling unreadable = new TransactionPooling(poolMode(Settings.PoolMode.AUTO), "c", false);
        assertTrue(unreadable.detected(null, 0));
        assertEquals(Boolean.TRUE, unreadable.known(), "kept: poolMode=session says otherwise");
    }
}
