package io.lockhygiene.internal.settings;

import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.function.Function;

import io.lockhygiene.settings.LockHygieneProperty;
import io.lockhygiene.settings.Settings;
import io.lockhygiene.internal.util.Urls;

/**
 * Resolves {@link Settings}, highest first: the connection's own keys (URL query parameters, then
 * {@code connect()} Properties), system properties {@code lockhygiene.*}, environment variables
 * {@code LOCKHYGIENE_*}, defaults. An unknown {@code lockhygiene.*} key or a bad value is an error that
 * names the key, the value and what is allowed.
 */
public final class SettingsReader {

    private SettingsReader() {
    }

    /**
     * @param connectionKeys our keys from the URL and Properties, URL winning (already merged)
     * @param system the JVM's system properties
     * @param env environment lookup
     */
    public static Settings read(Map<String, String> connectionKeys, Properties system, Function<String, String> env) {
        for (String key : connectionKeys.keySet()) {
            requireKnown(key, "the connection URL or Properties");
        }
        for (String key : system.stringPropertyNames()) {
            if (key.startsWith(LockHygieneProperty.PREFIX)) {
                requireKnown(key, "system properties");
            }
        }
        Settings.Builder b = Settings.builder();
        String[] modeFound = lookup(LockHygieneProperty.MODE, connectionKeys, system, env);
        if (modeFound != null) {
            b.mode(parse(Settings.Mode.values(), LockHygieneProperty.MODE, connectionKeys, system, env), modeFound[1]);
        }
        return b
                .poolMode(parse(Settings.PoolMode.values(), LockHygieneProperty.POOL_MODE, connectionKeys, system, env))
                .leakCheck(parse(Settings.LeakCheck.values(), LockHygieneProperty.LEAK_CHECK, connectionKeys, system, env))
                .logSql(parse(Settings.LogSql.values(), LockHygieneProperty.LOG_SQL, connectionKeys, system, env))
                .lockTimeoutMillis(parseMillis(LockHygieneProperty.LOCK_TIMEOUT, connectionKeys, system, env))
                .skipLocked(parse(Settings.SkipLocked.values(), LockHygieneProperty.SKIP_LOCKED, connectionKeys, system, env))
                .holderUrl(holderUrl(connectionKeys, system, env))
                .leakCheckSample(sampleRate(connectionKeys, system, env))
                .holderSessions(holderSessions(connectionKeys, system, env))
                .holderLingerMillis(parseMillis(LockHygieneProperty.HOLDER_LINGER, connectionKeys, system, env))
                .build();
    }

    /** 1 to Settings.MAX_HOLDER_SESSIONS. */
    private static int holderSessions(Map<String, String> connectionKeys, Properties system, Function<String, String> env) {
        String[] found = lookup(LockHygieneProperty.HOLDER_SESSIONS, connectionKeys, system, env);
        if (found == null) {
            return Integer.parseInt(LockHygieneProperty.HOLDER_SESSIONS.defaultValue());
        }
        try {
            int n = Integer.parseInt(found[0].trim());
            if (n >= 1 && n <= Settings.MAX_HOLDER_SESSIONS) {
                return n;
            }
        } catch (NumberFormatException bad) {
            // said below
        }
        throw new IllegalArgumentException("Bad value '" + found[0] + "' for " + LockHygieneProperty.HOLDER_SESSIONS.key() + " (from "
                + found[1] + "); allowed: a whole number from 1 to " + Settings.MAX_HOLDER_SESSIONS
                + " (server connections of each process's lock holder)");
    }

    /** "0.01", "1%", "0" (off), "1" (every transaction end). */
    private static double sampleRate(Map<String, String> connectionKeys, Properties system, Function<String, String> env) {
        String[] found = lookup(LockHygieneProperty.LEAK_CHECK_SAMPLE, connectionKeys, system, env);
        if (found == null) {
            return Settings.DEFAULT_LEAK_CHECK_SAMPLE;
        }
        String v = found[0].trim();
        try {
            double rate = v.endsWith("%") ? Double.parseDouble(v.substring(0, v.length() - 1).trim()) / 100
                    : Double.parseDouble(v);
            if (rate >= 0 && rate <= 1) {
                return rate;
            }
        } catch (NumberFormatException bad) {
            // said below
        }
        throw new IllegalArgumentException("Bad value '" + found[0] + "' for " + LockHygieneProperty.LEAK_CHECK_SAMPLE.key()
                + " (from " + found[1] + "); allowed: a share from 0 to 1 (0.01) or a percentage (1%); 0 turns it off");
    }

    /** auto, pooler, or a pgjdbc URL ({@code jdbc:lockhygiene:postgresql:} is taken as its pgjdbc URL). */
    private static Settings.HolderUrl holderUrl(Map<String, String> connectionKeys, Properties system,
                                                Function<String, String> env) {
        String[] found = lookup(LockHygieneProperty.HOLDER_URL, connectionKeys, system, env);
        if (found == null) {
            return Settings.HolderUrl.AUTO;
        }
        String value = found[0].trim();
        String lower = value.toLowerCase(Locale.ROOT);
        if (lower.equals("auto")) {
            return Settings.HolderUrl.AUTO;
        }
        if (lower.equals("pooler")) {
            return Settings.HolderUrl.POOLER;
        }
        if (ConnectionUrl.accepts(value)) {
            return Settings.HolderUrl.of(ConnectionUrl.parse(value).targetUrl());
        }
        if (value.startsWith("jdbc:postgresql:")) {
            return Settings.HolderUrl.of(value);
        }
        throw new IllegalArgumentException("Bad value '" + Urls.redact(value) + "' for "
                + LockHygieneProperty.HOLDER_URL.key() + " (from " + found[1] + "); allowed: auto, pooler, or a pgjdbc URL"
                + " (jdbc:postgresql://host:port/database)");
    }

    /**
     * For one connection (the driver's URL and Properties, the DataSource wrapper's Properties): as
     * {@link #read}, but a JVM-wide key there is refused, since one connection cannot decide for the whole
     * JVM and silently ignoring it would leave the user without the report or exit status they asked for.
     */
    public static Settings readForConnection(Map<String, String> connectionKeys, Properties system,
                                             Function<String, String> env) {
        for (String key : connectionKeys.keySet()) {
            LockHygieneProperty s = LockHygieneProperty.byKey(key);
            if (s != null && s.isJvmWide()) {
                throw new IllegalArgumentException(key + " is JVM-wide (one report file and one exit status per"
                        + " JVM), so a connection URL or Properties cannot set it: use -D" + key + "=..., the"
                        + " environment variable " + s.envName() + ", or the agent's options");
            }
        }
        return read(connectionKeys, system, env);
    }

    /** "0", "250ms", "30s", "2m"; a bare number is milliseconds. */
    private static long parseMillis(LockHygieneProperty setting, Map<String, String> connectionKeys, Properties system,
                                    Function<String, String> env) {
        String[] found = lookup(setting, connectionKeys, system, env);
        if (found == null) {
            return io.lockhygiene.internal.util.Durations.parseMillis(setting.defaultValue());
        }
        try {
            return io.lockhygiene.internal.util.Durations.parseMillis(found[0]);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("Bad value '" + found[0] + "' for " + setting.key() + " (from " + found[1]
                    + "); allowed: " + io.lockhygiene.internal.util.Durations.SYNTAX);
        }
    }

    /** The value and where it came from, highest source first; null when unset everywhere. */
    private static String[] lookup(LockHygieneProperty setting, Map<String, String> connectionKeys, Properties system,
                                   Function<String, String> env) {
        String value = connectionKeys.get(setting.key());
        if (value != null) {
            return new String[] {value, "the connection URL or Properties"};
        }
        value = system.getProperty(setting.key());
        if (value != null) {
            return new String[] {value, "system property " + setting.key()};
        }
        value = env.apply(setting.envName());
        return value == null ? null : new String[] {value, "environment variable " + setting.envName()};
    }

    /**
     * A JVM-wide key's raw value, highest first: the explicit values (the agent's options, the starter's
     * properties), system properties, the environment; null when unset everywhere.
     */
    public static String jvmWide(LockHygieneProperty setting, Function<String, String> explicit) {
        String v = explicit.apply(setting.key());
        if (v == null) {
            v = System.getProperty(setting.key());
        }
        if (v == null) {
            v = System.getenv(setting.envName());
        }
        return v;
    }

    /** From system properties and the environment alone (the DataSource wrapper, the agent). */
    public static Settings fromEnvironment() {
        return read(Map.of(), System.getProperties(), System::getenv);
    }

    private static void requireKnown(String key, String where) {
        if (LockHygieneProperty.byKey(key) == null) {
            StringBuilder known = new StringBuilder();
            for (LockHygieneProperty s : LockHygieneProperty.values()) {
                known.append(known.length() == 0 ? "" : ", ").append(s.key());
            }
            throw new IllegalArgumentException("Unknown LockHygiene setting '" + key + "' in " + where
                    + "; known settings: " + known);
        }
    }

    /** @param constants the enum's values() (not its Class: Enum.valueOf reflects, a cost at every start) */
    private static <E extends Enum<E>> E parse(E[] constants, LockHygieneProperty setting, Map<String, String> connectionKeys,
                                               Properties system, Function<String, String> env) {
        String[] found = lookup(setting, connectionKeys, system, env);
        String value = found == null ? setting.defaultValue() : found[0];
        String normal = value.trim().toUpperCase(Locale.ROOT);
        for (E e : constants) {
            if (e.name().equals(normal)) {
                return e;
            }
        }
        if (found == null) {
            throw new IllegalStateException("default " + value + " of " + setting.key() + " is not a value");
        }
        String source = found[1];
        throw new IllegalArgumentException("Bad value '" + value + "' for " + setting.key() + " (from " + source
                + "); allowed: " + String.join(", ", setting.allowedValues()));
    }
}
