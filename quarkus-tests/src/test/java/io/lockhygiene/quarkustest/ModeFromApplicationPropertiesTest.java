package io.lockhygiene.quarkustest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;

import io.lockhygiene.it.bed.TestBed;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

/**
 * lockhygiene.* keys come from the service's configuration (application.properties; here a test profile, which
 * Quarkus merges the same way): with {@code lockhygiene.mode=detect} a session lock taken in autocommit through
 * the transaction pooler is released with its statement (detect's leak check), where the default (emulate)
 * keeps it held by the lock holder until the unlock. The server says which (pg_locks).
 */
@QuarkusTest
@QuarkusTestResource(BedResource.class)
@TestProfile(ModeFromApplicationPropertiesTest.Detect.class)
class ModeFromApplicationPropertiesTest {
    public static class Detect implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("lockhygiene.mode", "detect");
        }
    }

    @Inject
    Jobs jobs;

    @Test
    void detectFromTheConfigurationReleasesTheLockWithItsStatement() throws Exception {
        long key = 46_460_010L;
        assertTrue(jobs.tryLock(key), "the try got the lock");
        assertTrue(TestBed.shared().admin().awaitReleased(key, 5_000).isEmpty(),
                "detect (from the configuration) released it with its statement; emulate would hold it");
        assertEquals(0, TestBed.shared().admin().holdersOf(key).size());
    }
}
