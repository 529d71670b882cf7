package io.lockhygiene.settings;

import java.util.Map;
import java.util.Properties;

import org.junit.jupiter.api.Test;

import io.lockhygiene.internal.settings.ConnectionUrl;
import io.lockhygiene.internal.settings.SettingsReader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import io.lockhygiene.internal.util.Urls;

class SettingsTest {

    @Test
    void stripsOnlyTheLeadingPrefixAndOurParameters() {
        ConnectionUrl u = ConnectionUrl.parse(
                "jdbc:lockhygiene:postgresql://h:5432/db?ssl=false&lockhygiene.mode=rewrite&ApplicationName=lockhygiene:x");
        assertEquals("jdbc:postgresql://h:5432/db?ssl=false&ApplicationName=lockhygiene:x", u.targetUrl());
        assertEquals(Map.of("lockhygiene.mode", "rewrite"), u.ourKeys());
        assertEquals("jdbc:postgresql://h/db", ConnectionUrl.parse("jdbc:lockhygiene:postgresql://h/db?lockhygiene.mode=off").targetUrl());
        assertEquals("jdbc:postgresql:db", ConnectionUrl.parse("jdbc:lockhygiene:postgresql:db").targetUrl());
        assertTrue(ConnectionUrl.accepts("jdbc:lockhygiene:postgresql://x/y"));
        assertFalse(ConnectionUrl.accepts("jdbc:postgresql://x/y"));
        assertFalse(ConnectionUrl.accepts("jdbc:lockhygiene:mysql://x/y"));
        assertFalse(ConnectionUrl.accepts(null));
    }

    @Test
    void urlBeatsPropertiesBeatsSystemBeatsEnvBeatsDefault() {
        Properties info = new Properties();
        info.setProperty("lockhygiene.mode", "strict");
        info.setProperty("lockhygiene.leakCheck", "always");
        ConnectionUrl u = ConnectionUrl.parse("jdbc:lockhygiene:postgresql://h/db?lockhygiene.mode=rewrite");
        Properties system = new Properties();
        system.setProperty("lockhygiene.leakCheck", "never");
        system.setProperty("lockhygiene.logSql", "full");
        Map<String, String> env = Map.of("LOCKHYGIENE_LOGSQL", "none", "LOCKHYGIENE_POOLMODE", "session");
        Settings s = SettingsReader.read(u.ourKeys(info), system, env::get);
        assertEquals(Settings.Mode.REWRITE, s.mode());
        assertEquals(Settings.LeakCheck.ALWAYS, s.leakCheck());
        assertEquals(Settings.LogSql.FULL, s.logSql());
        assertEquals(Settings.PoolMode.SESSION, s.poolMode());
        Settings d = SettingsReader.read(Map.of(), new Properties(), k -> null);
        assertEquals(Settings.DEFAULTS.toString(), d.toString());
    }

    @Test
    void emulateIsTheDefaultAndTheStartUpLineSaysWhyAndHowToRestoreTheOldOne() {
        Settings none = SettingsReader.read(Map.of(), new Properties(), k -> null);
        assertEquals(Settings.Mode.EMULATE, none.mode());
        assertTrue(none.modeIsDefault());
        assertEquals("emulate", LockHygieneProperty.MODE.defaultValue());
        String line = io.lockhygiene.internal.settings.ModeLine.line(none, "JDBC");
        assertTrue(line.contains("lockhygiene.mode=emulate (the default)") && line.contains("lockhygiene.mode=detect restores"), line);

        Settings url = SettingsReader.read(Map.of("lockhygiene.mode", "detect"), new Properties(), k -> null);
        assertFalse(url.modeIsDefault());
        assertEquals("the connection URL or Properties", url.modeSource());
        line = io.lockhygiene.internal.settings.ModeLine.line(url, "JDBC");
        assertTrue(line.contains("lockhygiene.mode=detect (the connection URL or Properties)")
                && line.contains("is released") && !line.contains("restores"), line);

        Settings env = SettingsReader.read(Map.of(), new Properties(), k -> k.equals("LOCKHYGIENE_MODE") ? "emulate" : null);
        assertFalse(env.modeIsDefault(), "emulate chosen by name is kept as chosen");
        assertEquals("environment variable LOCKHYGIENE_MODE", env.modeSource());
        assertFalse(Settings.builder().mode(Settings.Mode.EMULATE).build().modeIsDefault());
        assertTrue(Settings.DEFAULTS.modeIsDefault());
        assertTrue(Settings.DEFAULTS.toBuilder().leakCheck(Settings.LeakCheck.ALWAYS).build().modeIsDefault());
    }

    @Test
    void unknownKeysAndBadValuesFailClearly() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SettingsReader.read(Map.of("lockhygiene.mdoe", "x"), new Properties(), k -> null));
        assertTrue(e.getMessage().contains("lockhygiene.mdoe") && e.getMessage().contains("lockhygiene.mode"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> SettingsReader.read(Map.of("lockhygiene.mode", "loud"), new Properties(), k -> null));
        assertTrue(e.getMessage().contains("'loud'") && e.getMessage().contains("emulate, detect, rewrite, strict, off"), e.getMessage());
        Properties system = new Properties();
        system.setProperty("lockhygiene.bogus", "1");
        assertThrows(IllegalArgumentException.class, () -> SettingsReader.read(Map.of(), system, k -> null));
        assertThrows(IllegalArgumentException.class,
                () -> SettingsReader.read(Map.of(), new Properties(), Map.of("LOCKHYGIENE_MODE", "nope")::get));
    }

    @Test
    void leakCheckSampleTakesAShareOrAPercentage() {
        assertEquals(0.005, SettingsReader.read(Map.of(), new Properties(), k -> null).leakCheckSample());
        assertEquals(0.05, SettingsReader.read(Map.of("lockhygiene.leakCheckSample", "5%"), new Properties(), k -> null)
                .leakCheckSample(), 1e-12);
        assertEquals(0.0, SettingsReader.read(Map.of(), new Properties(),
                Map.of("LOCKHYGIENE_LEAKCHECKSAMPLE", "0")::get).leakCheckSample());
        for (String bad : new String[] {"2", "-0.1", "often", "150%"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> SettingsReader.read(Map.of("lockhygiene.leakCheckSample", bad), new Properties(), k -> null));
            assertTrue(e.getMessage().contains("lockhygiene.leakCheckSample") && e.getMessage().contains("0.01"), e.getMessage());
        }
    }

    @Test
    void valuesAreCaseInsensitive() {
        Settings s = SettingsReader.read(Map.of("lockhygiene.mode", " Rewrite "), new Properties(), k -> null);
        assertEquals(Settings.Mode.REWRITE, s.mode());
    }

    @Test
    void redactsPasswords() {
        assertEquals("jdbc:postgresql://h/db?user=u&password=***&sslpassword=***",
                Urls.redact("jdbc:postgresql://h/db?user=u&password=s3cret&sslpassword=p"));
    }

    @Test
    void truncatesSqlForLogs() {
        Settings s = Settings.DEFAULTS;
        String longSql = "x".repeat(500);
        assertTrue(s.loggable(longSql).startsWith("x".repeat(200) + "..."));
        Settings none = Settings.builder().logSql(Settings.LogSql.NONE).build();
        assertFalse(none.loggable("SELECT secret").contains("secret"));
    }

    @Test
    void jvmWideKeysAreRefusedForOneConnectionAndTakenFromTheJvm() {
        Properties none = new Properties();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SettingsReader.readForConnection(
                Map.of("lockhygiene.report", "/tmp/r.jsonl"), none, name -> null));
        assertTrue(e.getMessage().contains("JVM-wide"), e.getMessage());
        assertTrue(e.getMessage().contains("-Dlockhygiene.report="), e.getMessage());
        assertTrue(e.getMessage().contains("LOCKHYGIENE_REPORT"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> SettingsReader.readForConnection(
                Map.of("lockhygiene.failOnViolation", "true"), none, name -> null));
        // the agent's options (and -D, the environment) are JVM-wide already
        SettingsReader.read(Map.of("lockhygiene.report", "/tmp/r.jsonl"), none, name -> null);
    }

    @org.junit.jupiter.api.Test
    void holderLingerIsTenSecondsUnlessSetAndABadValueSaysWhatIsAllowed() {
        assertEquals(10_000, SettingsReader.read(Map.of(), new Properties(), k -> null).holderLingerMillis());
        assertEquals(500, SettingsReader.read(Map.of("lockhygiene.holderLinger", "500ms"), new Properties(), k -> null)
                .holderLingerMillis());
        assertEquals(0, SettingsReader.read(Map.of("lockhygiene.holderLinger", "0"), new Properties(), k -> null)
                .holderLingerMillis());
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> SettingsReader.read(Map.of("lockhygiene.holderLinger", "soon"), new Properties(), k -> null));
        org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("lockhygiene.holderLinger"), e.getMessage());
    }
}
