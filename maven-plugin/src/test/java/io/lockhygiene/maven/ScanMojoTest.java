package io.lockhygiene.maven;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;

import org.apache.maven.plugin.MojoExecutionException;
import org.apache.maven.plugin.MojoFailureException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The goal's rules without Maven around it (the sample projects under src/it run it inside Maven). */
class ScanMojoTest {
    private static ScanMojo mojo(Path project) {
        ScanMojo m = new ScanMojo();
        m.basedir = project.toFile();
        m.buildDirectory = project.resolve("target").toFile();
        m.format = "json";
        m.baseline = project.resolve("lockhygiene-baseline.txt").toFile();
        m.failOn = "note";
        return m;
    }

    @Test
    void failsOnAFindingPassesWhenAcceptedAndWhenOnlyNotesUnderFailOnWarning(@TempDir Path project) throws Exception {
        Files.createDirectories(project.resolve("src/main/resources"));
        Files.writeString(project.resolve("src/main/resources/a.sql"), "SELECT pg_advisory_unlock(1);\n");
        ScanMojo m = mojo(project);
        MojoFailureException e = assertThrows(MojoFailureException.class, m::execute);
        assertTrue(e.getMessage().contains("1 finding(s) fail the build"), e.getMessage());
        assertTrue(Files.readString(project.resolve("target/lockhygiene/scan.json")).contains("\"file\":\"src/main/resources/a.sql\""));
        m.failOn = "warning"; // an unlock is a note
        assertDoesNotThrow(m::execute);
        m.failOn = "note";
        m.writeBaseline = true;
        assertDoesNotThrow(m::execute);
        m.writeBaseline = false;
        assertDoesNotThrow(m::execute);
    }

    @Test
    void badSettingsAreClearErrors(@TempDir Path project) {
        ScanMojo m = mojo(project);
        m.format = "xml";
        assertTrue(assertThrows(MojoExecutionException.class, m::execute).getMessage().contains("text, json or sarif"));
        m.format = "text";
        m.failOn = "error";
        assertTrue(assertThrows(MojoExecutionException.class, m::execute).getMessage().contains("note or warning"));
        m.failOn = "note";
        m.directories = java.util.List.of(new File(project.toFile(), "missing"));
        assertTrue(assertThrows(MojoExecutionException.class, m::execute).getMessage().contains("no such file"));
    }
}
