package io.lockhygiene.settings;

import java.util.Locale;

/** One connection's configuration, resolved once at connect time. Immutable. */
public final class Settings {

    public enum Mode { DETECT, REWRITE, STRICT, EMULATE, OFF }

    public enum PoolMode { AUTO, TRANSACTION, SESSION }

    public enum LeakCheck { TRACKED, ALWAYS, NEVER }

    public enum LogSql {
        TRUNCATE, FULL, NONE;

        /** SQL as it may appear in a log line, an event or a report under this setting. */
        public String cut(String sql) {
            if (sql == null) {
                return "null";
            }
            switch (this) {
                case NONE:
                    return "<sql hidden: lockhygiene.logSql=none>";
                case FULL:
                    return sql;
                default:
                    return sql.length() <= TRUNCATE_AT ? sql : sql.substring(0, TRUNCATE_AT) + "... (" + sql.length()
                            + " chars; lockhygiene.logSql=full shows all)";
            }
        }
    }

    public enum SkipLocked { WARN, STRICT, OFF }

    /** Characters of SQL kept in logs and events with {@code logSql=truncate}. */
    public static final int TRUNCATE_AT = 200;

    /** {@code lockhygiene.leakCheckSample}'s default: one transaction end in two hundred (see README for the arithmetic). */
    public static final double DEFAULT_LEAK_CHECK_SAMPLE = 0.005;

    public static final Settings DEFAULTS = new Settings(Mode.DETECT, PoolMode.AUTO, LeakCheck.TRACKED, LogSql.TRUNCATE, 0,
            SkipLocked.WARN);

    private final Mode mode;
    private final PoolMode poolMode;
    private final LeakCheck leakCheck;
    private final LogSql logSql;
    private final long lockTimeoutMillis;
    private final SkipLocked skipLocked;
    private final String holderUrl;
    private final double leakCheckSample;

    public Settings(Mode mode, PoolMode poolMode, LeakCheck leakCheck, LogSql logSql) {
        this(mode, poolMode, leakCheck, logSql, 0, SkipLocked.WARN);
    }

    public Settings(Mode mode, PoolMode poolMode, LeakCheck leakCheck, LogSql logSql, long lockTimeoutMillis,
                    SkipLocked skipLocked) {
        this(mode, poolMode, leakCheck, logSql, lockTimeoutMillis, skipLocked, HOLDER_AUTO);
    }

    public Settings(Mode mode, PoolMode poolMode, LeakCheck leakCheck, LogSql logSql, long lockTimeoutMillis,
                    SkipLocked skipLocked, String holderUrl) {
        this(mode, poolMode, leakCheck, logSql, lockTimeoutMillis, skipLocked, holderUrl, DEFAULT_LEAK_CHECK_SAMPLE);
    }

    public Settings(Mode mode, PoolMode poolMode, LeakCheck leakCheck, LogSql logSql, long lockTimeoutMillis,
                    SkipLocked skipLocked, String holderUrl, double leakCheckSample) {
        if (!(leakCheckSample >= 0 && leakCheckSample <= 1)) {
            throw new IllegalArgumentException("leakCheckSample must be between 0 and 1, not " + leakCheckSample);
        }
        this.leakCheckSample = leakCheckSample;
        this.mode = mode;
        this.poolMode = poolMode;
        this.leakCheck = leakCheck;
        this.logSql = logSql;
        this.lockTimeoutMillis = lockTimeoutMillis;
        this.skipLocked = skipLocked;
        this.holderUrl = holderUrl;
    }

    /** {@code lockhygiene.holderUrl=auto}: the server's own address when it answers, else the pooler. */
    public static final String HOLDER_AUTO = "auto";
    /** {@code lockhygiene.holderUrl=pooler}: the application's own route. */
    public static final String HOLDER_POOLER = "pooler";

    /**
     * emulate: where the lock holder connects: {@link #HOLDER_AUTO}, {@link #HOLDER_POOLER}, or a pgjdbc URL
     * (which may carry a password: never log it as it is).
     */
    public String holderUrl() {
        return holderUrl;
    }

    /**
     * With {@code leakCheck=tracked}: the share (0 to 1) of the transaction ends that no tracked call makes due
     * which are checked anyway, under transaction pooling (the check rides in the end's own round trip).
     */
    public double leakCheckSample() {
        return leakCheckSample;
    }

    /** A copy with another sample rate (tests, the wrapper's programmatic use). */
    public Settings withLeakCheckSample(double rate) {
        return new Settings(mode, poolMode, leakCheck, logSql, lockTimeoutMillis, skipLocked, holderUrl, rate);
    }

    /** What happens to FOR UPDATE ... SKIP LOCKED pinned to one row by a unique key. */
    public SkipLocked skipLocked() {
        return skipLocked;
    }

    /** emulate: how long a blocking lock call may wait; 0 means no limit (as PostgreSQL itself). */
    public long lockTimeoutMillis() {
        return lockTimeoutMillis;
    }

    public Mode mode() {
        return mode;
    }

    public PoolMode poolMode() {
        return poolMode;
    }

    public LeakCheck leakCheck() {
        return leakCheck;
    }

    public LogSql logSql() {
        return logSql;
    }

    /** SQL as it may appear in a log line or event under this configuration. */
    public String loggable(String sql) {
        return logSql.cut(sql);
    }

    @Override
    public String toString() {
        return "lockhygiene.mode=" + lower(mode) + ", lockhygiene.poolMode=" + lower(poolMode)
                + ", lockhygiene.leakCheck=" + lower(leakCheck) + ", lockhygiene.leakCheckSample=" + leakCheckSample
                + ", lockhygiene.logSql=" + lower(logSql)
                + ", lockhygiene.lockTimeout=" + lockTimeoutMillis + "ms, lockhygiene.skipLocked=" + lower(skipLocked)
                + ", lockhygiene.holderUrl=" + (HOLDER_AUTO.equals(holderUrl) || HOLDER_POOLER.equals(holderUrl)
                ? holderUrl : io.lockhygiene.internal.settings.ConnectionUrl.redact(holderUrl)); // a keyword loads no redaction
    }

    static String lower(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT);
    }
}
