package io.lockhygiene.it.r2dbc;

import static io.lockhygiene.it.r2dbc.R2dbcRoutes.*;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(TestBedExtension.class)
class R2dbcSmokeTest {
    private final TestBed bed = TestBed.shared();

    @Test
    void detectReleasesAnAutocommitLock() throws Exception {
        long k = 1_990_001;
        ConnectionFactory cf = guarded(bed, Route.TRANSACTION_POOL);
        Connection c = open(cf);
        assertEquals("true", one(c, "select pg_try_advisory_lock(" + k + ")"));
        close(c);
        assertEquals(List.of(), bed.admin().holdersOf(k));
    }

    @Test
    void emulateKeepsExclusion() throws Exception {
        long k = 1_990_002;
        ConnectionFactory cf = guarded(bed, Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
        Connection a = open(cf);
        Connection b = open(cf);
        assertEquals("true", one(a, "select pg_try_advisory_lock($1)", k));
        assertEquals("false", one(b, "select pg_try_advisory_lock($1)", k));
        assertEquals(1, bed.admin().holdersOf(k).size());
        assertEquals("true", one(a, "select pg_advisory_unlock($1)", k));
        assertEquals("true", one(b, "select pg_try_advisory_lock($1)", k));
        close(b);
        close(a);
        assertEquals(List.of(), bed.admin().holdersOf(k));
    }
}
