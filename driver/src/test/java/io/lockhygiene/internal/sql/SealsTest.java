package io.lockhygiene.internal.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Seals in the lock table's first partition. The hash's expected values are what PostgreSQL 15 answered to
 * {@code hashtext(s COLLATE "C")} (hash_bytes of the text's bytes), for lengths that take every branch: nothing,
 * one to three bytes, a whole word, the tail into c, exactly one and one more than a block of twelve, several
 * blocks. {@code SealPlacementTest} asks every supported PostgreSQL the same of random texts.
 */
class SealsTest {
    private static int hash(String s) {
        return Seals.hashBytes(s.getBytes(StandardCharsets.US_ASCII));
    }

    @Test
    void hashesAsPostgresHashtextDoes() {
        assertEquals(-1477818771, hash(""));
        assertEquals(1075015857, hash("a"));
        assertEquals(1718550461, hash("ab"));
        assertEquals(-785388649, hash("abc"));
        assertEquals(-393934804, hash("abcd"));
        assertEquals(-1483803693, hash("abcdefghijk"));
        assertEquals(-1586087212, hash("abcdefghijkl"));
        assertEquals(405849808, hash("abcdefghijklm"));
        assertEquals(-934322655, hash(Seals.PLACEMENT_PROBE));
        assertEquals(-933383701, hash("0123456789abcdefghijklmnopqrstuvwxyz"));
    }

    @Test
    void aServerThatAnswersTheProbeAsWeHashPlacesSeals() {
        assertTrue(Seals.placesSeals("-934322655"));
        assertFalse(Seals.placesSeals("-934322654"), "another hash (a big-endian server): seals anywhere");
        assertFalse(Seals.placesSeals(null));
        assertFalse(Seals.placesSeals("not a number"));
    }

    @Test
    void freshSealsInTheFirstPartitionAreThereAndVaried() {
        java.util.Set<Integer> seen = new java.util.HashSet<>();
        for (int i = 0; i < 200; i++) {
            int seal = Seals.freshInFirstPartition(16384);
            assertNotEquals(0, seal);
            assertEquals(0, Seals.lockPartition(16384, Seals.CLASSID, seal));
            seen.add(seal);
        }
        assertTrue(seen.size() > 190, "random: " + seen.size());
        int[] partitions = new int[16];
        for (int objid = 1; objid <= 1600; objid++) {
            partitions[Seals.lockPartition(5, Seals.CLASSID, objid)]++;
        }
        for (int p : partitions) {
            assertTrue(p > 50, "the partitions are spread: " + java.util.Arrays.toString(partitions));
        }
    }
}
