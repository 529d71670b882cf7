package io.lockhygiene.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Paths;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The driver's packages point one way: from the API at the top down to the log and small helpers. This is the
 * layer order of docs/architecture.md, kept by the build; the second half shows the rules catch what they
 * exist to catch.
 */
class LayeringTest {
    /** Top down. A package may use only the layers below its own. */
    static final Layers DRIVER = new Layers(
            "api: io.lockhygiene io.lockhygiene.monitor",
            "JDBC front end: io.lockhygiene.internal.jdbc io.lockhygiene.internal.flyway",
            "JDBC per-connection guard: io.lockhygiene.internal.guard",
            "per-connection core, every front end's: io.lockhygiene.internal.session",
            "per-connection emulation: io.lockhygiene.internal.emulate",
            "holder placement: io.lockhygiene.internal.placement",
            "holder: io.lockhygiene.internal.holder",
            "lock table: io.lockhygiene.internal.locktable",
            "reports: io.lockhygiene.internal.leak io.lockhygiene.internal.lint",
            "events: io.lockhygiene.internal.events",
            "pgjdbc's classes: io.lockhygiene.internal.pgjdbc",
            "decisions: io.lockhygiene.internal.policy",
            "statement shapes: io.lockhygiene.internal.shape",
            "statement text: io.lockhygiene.internal.sql",
            "settings: io.lockhygiene.internal.settings",
            "public types: io.lockhygiene.settings io.lockhygiene.events",
            "log: io.lockhygiene.internal.log",
            "helpers: io.lockhygiene.internal.util");

    @Test
    void theDriversPackagesPointDown() throws IOException {
        ImportGraph graph = ImportGraph.of(Paths.get("src/main/java"));
        assertTrue(graph.packages().size() > 15, "the sources were found: " + graph.packages());
        List<String> violations = DRIVER.violations(graph);
        assertTrue(violations.isEmpty(), String.join("\n", violations));
    }

    // the rules themselves: each must be able to fail

    private static final Layers THREE = new Layers("top: a", "middle: b c", "bottom: d");

    @Test
    void anArrowDownIsFine() {
        assertEquals(List.of(), THREE.violations(ImportGraph.of("a -> b", "b -> d", "c -> d", "a -> d")));
    }

    @Test
    void anArrowUpIsCaught() {
        List<String> v = THREE.violations(ImportGraph.of("a -> b", "c -> d", "d -> b"));
        assertEquals(1, v.size(), v.toString());
        assertTrue(v.get(0).startsWith("d (bottom) uses b (middle, a layer above)"), v.get(0));
    }

    @Test
    void peersDoNotKnowEachOther() {
        List<String> v = THREE.violations(ImportGraph.of("b -> c", "a -> d"));
        assertTrue(v.get(0).startsWith("b (middle) uses c (middle, its own layer)"), v.toString());
    }

    @Test
    void aCycleIsCaughtAndNamed() {
        List<String> v = THREE.violations(ImportGraph.of("a -> b", "b -> a", "c -> d"));
        assertTrue(v.contains("packages in a cycle: [a, b]"), v.toString());
    }

    @Test
    void aPackageInNoLayerIsCaught() {
        List<String> v = THREE.violations(ImportGraph.of("a -> b", "e -> d", "c -> d"));
        assertTrue(v.contains("e is in no layer: add it to the layer order"), v.toString());
    }

    @Test
    void namesInCommentsAndStringsAreNoArrows() {
        String code = "package x;\n// io.lockhygiene.internal.holder\nclass A { String s = \"io.lockhygiene.y.Z\"; "
                + "/* io.lockhygiene.z */ char c = '\\''; }\n";
        String blanked = ImportGraph.withoutCommentsAndLiterals(code);
        assertTrue(!blanked.contains("lockhygiene"), blanked);
        assertEquals(code.split("\n").length, blanked.split("\n").length, "lines kept");
    }
}
