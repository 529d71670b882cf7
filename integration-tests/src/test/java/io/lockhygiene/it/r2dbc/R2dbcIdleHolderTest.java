package io.lockhygiene.it.r2dbc;

import static io.lockhygiene.it.r2dbc.R2dbcRoutes.guarded;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;

import io.lockhygiene.it.bed.Eventually;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import io.r2dbc.spi.ConnectionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Issue 44 for R2DBC: reactive workers' holder closes its sessions once idle for its linger; the next burst runs. */
@ExtendWith({TestBedExtension.class, BlockHoundExtension.class})
class R2dbcIdleHolderTest {
    private final TestBed bed = TestBed.shared();

    @Test
    void anIdleReactiveServiceKeepsNoHolderSession() throws Exception {
        ConnectionFactory cf = guarded(bed, Route.PREPARED_TRANSACTION_POOL, "lockhygiene.mode=emulate",
                "lockhygiene.holderLinger=500ms");
        ReactiveWorkers.Outcome first = ReactiveWorkers.tryLockJobUnlock(cf, 948_001, 4, 10);
        assertTrue(first.jobs() > 0 && first.overlapping() == 0 && first.errors() == 0, first.toString());
        Eventually.until("the holder's sessions closed after its linger", Duration.ofSeconds(10),
                () -> bed.admin().sessionsNamed("lockhygiene lock holder") == 0);
        assertEquals(List.of(), bed.admin().heldAdvisoryLocks(), "nothing held");
        ReactiveWorkers.Outcome second = ReactiveWorkers.tryLockJobUnlock(cf, 948_001, 4, 10);
        assertTrue(second.jobs() > 0 && second.overlapping() == 0 && second.errors() == 0, second.toString());
        Eventually.until("closed again", Duration.ofSeconds(10),
                () -> bed.admin().sessionsNamed("lockhygiene lock holder") == 0);
    }
}
