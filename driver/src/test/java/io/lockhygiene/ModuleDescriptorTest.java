package io.lockhygiene;

import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The driver's module: only the API packages are exported to everyone; every internal one is named to its users. */
class ModuleDescriptorTest {
    @Test
    void onlyTheApiIsExportedToEveryone() throws Exception {
        Path file = Paths.get("target/classes/module-info.class");
        ModuleDescriptor d;
        try (InputStream in = Files.newInputStream(file)) {
            d = ModuleDescriptor.read(in);
        }
        assertEquals("io.lockhygiene", d.name());
        Set<String> open = new TreeSet<>();
        for (ModuleDescriptor.Exports e : d.exports()) {
            if (e.isQualified()) {
                assertTrue(e.source().startsWith("io.lockhygiene.internal."), e.toString());
                assertFalse(e.targets().isEmpty());
                for (String target : e.targets()) {
                    assertTrue(Set.of("io.lockhygiene.agent", "io.lockhygiene.cli", "io.lockhygiene.spring", "io.lockhygiene.r2dbc")
                            .contains(target), "shared only with LockHygiene's own modules: " + e);
                }
            } else {
                open.add(e.source());
            }
        }
        assertEquals(new TreeSet<>(Set.of("io.lockhygiene", "io.lockhygiene.events", "io.lockhygiene.monitor",
                "io.lockhygiene.settings")), open);
        assertTrue(d.provides().stream().anyMatch(p -> p.service().equals("java.sql.Driver")
                && p.providers().contains(LockHygieneDriver.class.getName())));
    }
}
