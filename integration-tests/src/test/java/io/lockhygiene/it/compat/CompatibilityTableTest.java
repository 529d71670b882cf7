package io.lockhygiene.it.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import org.junit.jupiter.api.Test;

/**
 * Runs last in the module (its own Surefire execution, after the PostgreSQL matrix): docs/compatibility.md's
 * table is what this run's records and reports make of it, so the docs claim no PostgreSQL a run did not pass
 * on, and every major the run passed on is claimed.
 */
class CompatibilityTableTest {
    @Test
    void theDocsTableIsWhatThisRunProved() throws Exception {
        Path target = Paths.get("target");
        String table = CompatibilityTable.render(target);
        for (String major : new String[] {"| 14.", "| 15 ", "| 16.", "| 17.", "| 18."}) {
            assertTrue(table.contains(major), "this run proved no PostgreSQL " + major.substring(2).trim()
                    + " (its bed's record or test reports are missing):\n" + table);
        }
        String doc = Files.readString(Paths.get("..", "docs", "compatibility.md"));
        String inDocs = CompatibilityTable.generatedPart(doc);
        assertNotNull(inDocs, "docs/compatibility.md has no generated table");
        assertEquals(table, inDocs, "docs/compatibility.md's table is not what this run proved: run bin/compatibility-table"
                + " after a whole `mvn verify`, and commit docs/compatibility.md");
    }
}
