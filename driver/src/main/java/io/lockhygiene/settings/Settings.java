package io.lockhygiene.settings;

import java.util.Locale;
import io.lockhygiene.internal.util.Urls;

/**
 * One connection's configuration, resolved once at connect time (from the URL, Properties, system
 * properties and environment: see README), or made in code with {@link #builder()}. Immutable.
 */
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

    /**
     * emulate: where the lock holder connects ({@code lockhygiene.holderUrl}): {@link #AUTO} (the server's own
     * address when it answers, else the pooler), {@link #POOLER} (the application's own route), or a pgjdbc
     * URL of its own (which may carry a password: {@link #toString} redacts it).
     */
    public static final class HolderUrl {
        public static final HolderUrl AUTO = new HolderUrl("auto", null);
        public static final HolderUrl POOLER = new HolderUrl("pooler", null);

        private final String keyword;
        private final String url;

        private HolderUrl(String keyword, String url) {
            this.keyword = keyword;
            this.url = url;
        }

        /** An explicit pgjdbc URL ({@code jdbc:postgresql:...}). */
        public static HolderUrl of(String url) {
            if (url == null || !url.startsWith("jdbc:postgresql:")) {
                throw new IllegalArgumentException("lockhygiene.holderUrl takes a pgjdbc URL (jdbc:postgresql://host:port/"
                        + "database), auto or pooler");
            }
            return new HolderUrl(null, url);
        }

        /** The explicit URL, or null for auto and pooler. */
        public String url() {
            return url;
        }

        /** The key placements are shared under: the keyword, or the URL. */
        public String key() {
            return keyword != null ? keyword : url;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof HolderUrl && key().equals(((HolderUrl) o).key());
        }

        @Override
        public int hashCode() {
            return key().hashCode();
        }

        /** The keyword, or the URL without its password (safe to log). */
        @Override
        public String toString() {
            return keyword != null ? keyword : Urls.redact(url);
        }
    }

    /** Every setting at its default: {@code mode=emulate}, as {@code jdbc:lockhygiene:} with nothing set. */
    public static final Settings DEFAULTS = builder().build();

    private final Mode mode;
    /** Where the mode was chosen (a URL, a system property, code), or null when it is the default. */
    private final String modeSource;
    private final PoolMode poolMode;
    private final LeakCheck leakCheck;
    private final LogSql logSql;
    private final long lockTimeoutMillis;
    private final SkipLocked skipLocked;
    private final HolderUrl holderUrl;
    private final double leakCheckSample;
    private final int holderSessions;
    private final long holderLingerMillis;

    private Settings(Builder b) {
        this.mode = b.mode;
        this.modeSource = b.modeSource;
        this.poolMode = b.poolMode;
        this.leakCheck = b.leakCheck;
        this.logSql = b.logSql;
        this.lockTimeoutMillis = b.lockTimeoutMillis;
        this.skipLocked = b.skipLocked;
        this.holderUrl = b.holderUrl;
        this.leakCheckSample = b.leakCheckSample;
        this.holderSessions = b.holderSessions;
        this.holderLingerMillis = b.holderLingerMillis;
    }

    /** The one way to make settings in code; the driver and the wrapper read them from keys (see README). */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder that starts from these settings. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.mode = mode;
        b.modeSource = modeSource;
        b.poolMode = poolMode;
        b.leakCheck = leakCheck;
        b.logSql = logSql;
        b.lockTimeoutMillis = lockTimeoutMillis;
        b.skipLocked = skipLocked;
        b.holderUrl = holderUrl;
        b.leakCheckSample = leakCheckSample;
        b.holderSessions = holderSessions;
        b.holderLingerMillis = holderLingerMillis;
        return b;
    }

    /** Builds {@link Settings}; every value starts at its default. Not thread-safe. */
    public static final class Builder {
        private Mode mode = Mode.EMULATE;
        private String modeSource;
        private PoolMode poolMode = PoolMode.AUTO;
        private LeakCheck leakCheck = LeakCheck.TRACKED;
        private LogSql logSql = LogSql.TRUNCATE;
        private long lockTimeoutMillis;
        private SkipLocked skipLocked = SkipLocked.WARN;
        private HolderUrl holderUrl = HolderUrl.AUTO;
        private double leakCheckSample = DEFAULT_LEAK_CHECK_SAMPLE;
        private int holderSessions = 1;
        private long holderLingerMillis = DEFAULT_HOLDER_LINGER_MILLIS;

        private Builder() {
        }

        /** The mode, chosen in code (so a holder that cannot get a session of its own is used anyway: see README). */
        public Builder mode(Mode value) {
            return mode(value, "code");
        }

        /**
         * The mode and where it was chosen, for the start-up line ({@code "the connection URL or Properties"},
         * {@code "system property lockhygiene.mode"}); a chosen mode is kept as chosen, while the default
         * (never set) may step back where it would do harm (see {@link #modeIsDefault()}).
         */
        public Builder mode(Mode value, String source) {
            mode = java.util.Objects.requireNonNull(value, "mode");
            modeSource = java.util.Objects.requireNonNull(source, "source");
            return this;
        }

        public Builder poolMode(PoolMode value) {
            poolMode = java.util.Objects.requireNonNull(value, "poolMode");
            return this;
        }

        public Builder leakCheck(LeakCheck value) {
            leakCheck = java.util.Objects.requireNonNull(value, "leakCheck");
            return this;
        }

        public Builder logSql(LogSql value) {
            logSql = java.util.Objects.requireNonNull(value, "logSql");
            return this;
        }

        /** emulate: how long a blocking lock call may wait; 0 means no limit (as PostgreSQL itself). */
        public Builder lockTimeoutMillis(long millis) {
            if (millis < 0) {
                throw new IllegalArgumentException("lockTimeout must not be negative, not " + millis);
            }
            lockTimeoutMillis = millis;
            return this;
        }

        public Builder skipLocked(SkipLocked value) {
            skipLocked = java.util.Objects.requireNonNull(value, "skipLocked");
            return this;
        }

        public Builder holderUrl(HolderUrl value) {
            holderUrl = java.util.Objects.requireNonNull(value, "holderUrl");
            return this;
        }

        /** A share from 0 to 1 of the transaction ends checked although nothing tracked made them due. */
        public Builder leakCheckSample(double rate) {
            if (!(rate >= 0 && rate <= 1)) {
                throw new IllegalArgumentException("leakCheckSample must be between 0 and 1, not " + rate);
            }
            leakCheckSample = rate;
            return this;
        }

        /** emulate: how long an idle lock holder keeps its server sessions (0: it closes them at once). */
        public Builder holderLingerMillis(long millis) {
            if (millis < 0) {
                throw new IllegalArgumentException("holderLinger must not be negative, not " + millis);
            }
            holderLingerMillis = millis;
            return this;
        }

        /** emulate: the main sessions of the lock holder, 1 to {@value #MAX_HOLDER_SESSIONS}. */
        public Builder holderSessions(int n) {
            if (n < 1 || n > MAX_HOLDER_SESSIONS) {
                throw new IllegalArgumentException("holderSessions must be between 1 and " + MAX_HOLDER_SESSIONS + ", not " + n);
            }
            holderSessions = n;
            return this;
        }

        public Settings build() {
            return new Settings(this);
        }
    }

    /** The most main sessions one holder may have: each is a server connection of every process. */
    public static final int MAX_HOLDER_SESSIONS = 16;

    /** lockhygiene.holderLinger's default: 10 s (see BENCHMARKS.md, "an idle holder"). */
    public static final long DEFAULT_HOLDER_LINGER_MILLIS = 10_000;

    /** emulate: how long a lock holder that holds nothing and waits for nothing keeps its server sessions. */
    public long holderLingerMillis() {
        return holderLingerMillis;
    }

    /** emulate: how many main sessions the lock holder spreads its keys over (per process and database). */
    public int holderSessions() {
        return holderSessions;
    }

    /** emulate: where the lock holder connects. */
    public HolderUrl holderUrl() {
        return holderUrl;
    }

    /**
     * With {@code leakCheck=tracked}: the share (0 to 1) of the transaction ends that no tracked call makes due
     * which are checked anyway, under transaction pooling (the check rides in the end's own round trip).
     */
    public double leakCheckSample() {
        return leakCheckSample;
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

    /**
     * True when nobody chose the mode: {@code emulate} by default, which steps back to plain pgjdbc's
     * behaviour (reported) where the process's lock holder could get no session of its own (README: "choose
     * a mode").
     */
    public boolean modeIsDefault() {
        return modeSource == null;
    }

    /** Where the mode was chosen, or {@code "the default"}. */
    public String modeSource() {
        return modeSource == null ? "the default" : modeSource;
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
                + ", lockhygiene.holderUrl=" + holderUrl + ", lockhygiene.holderSessions=" + holderSessions
                + ", lockhygiene.holderLinger=" + holderLingerMillis + "ms";
    }

    static String lower(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT);
    }
}
