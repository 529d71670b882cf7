package io.lockhygiene.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import io.lockhygiene.it.compat.CompatibilityTable;
import org.junit.jupiter.api.Test;

/**
 * The last test of the build: docs/compatibility.md's generated tables are what this build's records and reports
 * make of them (the whole suite on the machine's PostgreSQL, the matrix on every other supported major, R2DBC,
 * each Spring Boot and Quarkus application), so the docs claim nothing a run did not pass and leave out nothing
 * it did.
 */
class CompatibilityTableTest {
    @Test
    void theDocsTablesAreWhatThisBuildProved() throws Exception {
        Path records = Paths.get("..", "target", "compatibility");
        String table = CompatibilityTable.render(records);
        for (String major : new String[] {"| 14.", "| 15 ", "| 16.", "| 17.", "| 18."}) {
            assertTrue(table.contains(major), "this build proved no PostgreSQL " + major.substring(2).trim()
                    + " (its bed's record or test reports are missing):\n" + table);
        }
        String doc = Files.readString(Paths.get("..", "docs", "compatibility.md"));
        String inDocs = CompatibilityTable.generatedPart(doc);
        assertNotNull(inDocs, "docs/compatibility.md has no generated tables");
        assertEquals(table, inDocs, "docs/compatibility.md's tables are not what this build proved: run"
                + " bin/compatibility-table after a whole `mvn verify`, and commit docs/compatibility.md");
    }
}
