package io.lockhygiene.spring;

import java.time.Duration;
import java.util.Properties;

import io.lockhygiene.settings.Settings;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code lockhygiene.*} in application.properties or YAML, with Spring's relaxed binding
 * ({@code lockhygiene.pool-mode}, {@code LOCKHYGIENE_POOLMODE}). A key left unset falls back to the
 * driver's own sources ({@code -Dlockhygiene.*}, {@code LOCKHYGIENE_*}) and its default.
 * {@code lockhygiene.report} and {@code lockhygiene.fail-on-violation} are JVM-wide: applied once, before
 * the first connection (see {@link LockHygieneProcessReports}), never per DataSource.
 */
@ConfigurationProperties(prefix = "lockhygiene")
public class LockHygieneProperties {
    /** Whether every DataSource bean is wrapped by LockHygiene. */
    private boolean enabled = true;
    /**
     * What LockHygiene does with session-level advisory lock calls under transaction pooling: emulate (the
     * default: keep their session semantics safely), detect (report them, release leaks), rewrite (to their
     * transaction-level forms), strict (refuse), off.
     */
    private Settings.Mode mode;
    /** Whether connections go through a transaction pooler: auto (detected), transaction, or session. */
    private Settings.PoolMode poolMode;
    /** When to look for leaked session locks: tracked (after statements that touched them), always, never. */
    private Settings.LeakCheck leakCheck;
    /**
     * With leak-check=tracked under transaction pooling: the share of the other transaction ends checked too
     * (0.005 by default; 0 turns it off), to find session locks taken in PL/pgSQL, triggers or DO blocks.
     */
    private Double leakCheckSample;
    /** SQL in logs: truncate, full, or none (SQL can hold personal data). */
    private Settings.LogSql logSql;
    /** The SKIP LOCKED single-key lint: warn, strict (refuse), or off. */
    private Settings.SkipLocked skipLocked;
    /** emulate: how long a blocking advisory lock call waits before failing with 55P03 (0: as long as it takes). */
    private Duration lockTimeout;
    /**
     * emulate: where the process's lock holder connects: auto (the server itself when the application's
     * backend names a reachable address of the same database, else the pooler, with a WARN), pooler (the
     * application's own route), or a pgjdbc URL (the server, or a session-mode PgBouncer entry).
     */
    private String holderUrl;
    /**
     * emulate: how many main sessions the process's lock holder spreads its keys over (1 to 16; each is one
     * server connection per process); unset: 1.
     */
    private Integer holderSessions;
    /**
     * emulate: how long the process's lock holder keeps its server sessions while it holds nothing and waits for
     * nothing; then they close and the next lock opens them again; unset: 10 s.
     */
    private Duration holderLinger;
    /** JVM-wide: a file that gets every LockHygiene event as one JSON object per line. */
    private String report;
    /** The advisory-wait monitor: sessions waiting for an advisory lock longer than a threshold. */
    private final Monitor monitor = new Monitor();

    /** {@code lockhygiene.monitor.*}. */
    public static class Monitor {
        /** Whether to poll for advisory waits (one pg_locks query per interval, on one pooled connection). */
        private boolean enabled;
        /** A wait longer than this is reported (WARN once per episode, and in the gauges). */
        private Duration threshold = Duration.ofSeconds(30);
        /** How often to poll. */
        private Duration interval = Duration.ofSeconds(10);
        /** The waits as a health contributor. */
        private final Health health = new Health();

        /** {@code lockhygiene.monitor.health.*}. */
        public static class Health {
            /**
             * A health contributor (lockHygieneWaits) that is DOWN while a wait over the threshold exists, read
             * from the monitor's last poll. Off by default: put it in a health group that is not a liveness probe.
             */
            private boolean enabled;

            public boolean isEnabled() {
                return enabled;
            }

            public void setEnabled(boolean enabled) {
                this.enabled = enabled;
            }
        }

        public Health getHealth() {
            return health;
        }

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Duration getThreshold() {
            return threshold;
        }

        public void setThreshold(Duration threshold) {
            this.threshold = threshold;
        }

        public Duration getInterval() {
            return interval;
        }

        public void setInterval(Duration interval) {
            this.interval = interval;
        }
    }

    public Monitor getMonitor() {
        return monitor;
    }
    /** JVM-wide: at exit, a run that saw a leak, an inherited lock, a refusal or a SKIP LOCKED trap exits with status 3. */
    private boolean failOnViolation;

    /** The set keys, as the driver's settings Properties (unset keys are left to -D, environment, default). */
    Properties toDriverProperties() {
        Properties p = new Properties();
        put(p, "lockhygiene.mode", mode);
        put(p, "lockhygiene.poolMode", poolMode);
        put(p, "lockhygiene.leakCheck", leakCheck);
        put(p, "lockhygiene.logSql", logSql);
        if (leakCheckSample != null) {
            p.setProperty("lockhygiene.leakCheckSample", leakCheckSample.toString());
        }
        put(p, "lockhygiene.skipLocked", skipLocked);
        if (lockTimeout != null) {
            p.setProperty("lockhygiene.lockTimeout", lockTimeout.toMillis() + "ms");
        }
        if (holderUrl != null && !holderUrl.isBlank()) {
            p.setProperty("lockhygiene.holderUrl", holderUrl.trim());
        }
        if (holderSessions != null) {
            p.setProperty("lockhygiene.holderSessions", holderSessions.toString());
        }
        if (holderLinger != null) {
            p.setProperty("lockhygiene.holderLinger", holderLinger.toMillis() + "ms");
        }
        return p;
    }

    private static void put(Properties p, String key, Enum<?> value) {
        if (value != null) {
            p.setProperty(key, value.name().toLowerCase(java.util.Locale.ROOT));
        }
    }

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public Settings.Mode getMode() {
        return mode;
    }

    public void setMode(Settings.Mode mode) {
        this.mode = mode;
    }

    public Settings.PoolMode getPoolMode() {
        return poolMode;
    }

    public void setPoolMode(Settings.PoolMode poolMode) {
        this.poolMode = poolMode;
    }

    public Double getLeakCheckSample() {
        return leakCheckSample;
    }

    public void setLeakCheckSample(Double leakCheckSample) {
        this.leakCheckSample = leakCheckSample;
    }

    public Settings.LeakCheck getLeakCheck() {
        return leakCheck;
    }

    public void setLeakCheck(Settings.LeakCheck leakCheck) {
        this.leakCheck = leakCheck;
    }

    public Settings.LogSql getLogSql() {
        return logSql;
    }

    public void setLogSql(Settings.LogSql logSql) {
        this.logSql = logSql;
    }

    public Settings.SkipLocked getSkipLocked() {
        return skipLocked;
    }

    public void setSkipLocked(Settings.SkipLocked skipLocked) {
        this.skipLocked = skipLocked;
    }

    public String getHolderUrl() {
        return holderUrl;
    }

    public void setHolderUrl(String holderUrl) {
        this.holderUrl = holderUrl;
    }

    public Integer getHolderSessions() {
        return holderSessions;
    }

    public void setHolderSessions(Integer holderSessions) {
        this.holderSessions = holderSessions;
    }

    public Duration getHolderLinger() {
        return holderLinger;
    }

    public void setHolderLinger(Duration holderLinger) {
        this.holderLinger = holderLinger;
    }

    public String getReport() {
        return report;
    }

    public void setReport(String report) {
        this.report = report;
    }

    public boolean isFailOnViolation() {
        return failOnViolation;
    }

    public void setFailOnViolation(boolean failOnViolation) {
        this.failOnViolation = failOnViolation;
    }

    public Duration getLockTimeout() {
        return lockTimeout;
    }

    public void setLockTimeout(Duration lockTimeout) {
        this.lockTimeout = lockTimeout;
    }
}
