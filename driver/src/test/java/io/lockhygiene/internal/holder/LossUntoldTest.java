package io.lockhygiene.internal.holder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;

import io.lockhygiene.internal.emulate.Emulation;
import io.lockhygiene.internal.emulate.Outcome;
import io.lockhygiene.internal.locktable.AdvisoryKey;
import io.lockhygiene.internal.locktable.LockOwner;
import io.lockhygiene.internal.session.OwnerSession;
import io.lockhygiene.internal.session.TextAnalysis;
import io.lockhygiene.settings.Settings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The seals-then-loss rule at a statement's start, where a front end asks for the loss first and whether its owner
 * holds anything after (CI saw the window once, FencedCommitTest through the DataSource wrapper: a batch went out
 * unfenced). A loss marks the owners before the table forgets their locks; an owner marked and not told yet
 * counts as holding, so the statement goes the holding owner's way, where the loss is asked again and told.
 */
class LossUntoldTest {
    private final FakeServer server = new FakeServer();
    private Holder holder;

    @AfterEach
    void shutDown() {
        if (holder != null) {
            holder.shutdown();
        }
    }

    @Test
    void anOwnerWhoseLossIsNotToldYetStillHoldsSoItsCommitIsToldTheLoss() throws Exception {
        holder = new Holder(HolderEndpoint.ofLinks(HolderEndpoint.Kind.DIRECT, "fake", new Object(), server::open));
        OwnerSession session = new OwnerSession(Settings.builder().mode(Settings.Mode.EMULATE).build(), "lh-1", holder, null);
        Emulation e = session.emulation();
        Outcome taken = e.execute(OwnerSession.withoutConnection(TextAnalysis.of("SELECT pg_advisory_lock(42)").shape()),
                null, false, 0, null, null);
        taken.finish();
        assertTrue(e.ownerHolds());

        assertNull(e.lossOnce(), "a statement asks for the loss first: none yet");
        server.failNext = true; // now the holder loses its server: another owner's call meets it
        LockOwner other = LockOwner.ofConnection("other", null);
        assertThrows(SQLException.class, () -> holder.acquire(other, AdvisoryKey.bigint(8), false, true, null, 0,
                EmulatedWait.Limits.none()));
        assertFalse(holder.table().anyoneHolds(), "the table forgot every lock");

        assertTrue(e.ownerHolds(), "marked lost, not told: the statement goes the holding owner's (fenced) way");
        SQLException lost = assertThrows(SQLException.class, e::commitSeals, "its commit is told the loss");
        assertEquals("08006", lost.getSQLState());
        assertFalse(e.ownerHolds(), "told once: it holds nothing now");
        assertNull(e.commitSeals(), "and its next commit has nothing to fence");
    }
}
