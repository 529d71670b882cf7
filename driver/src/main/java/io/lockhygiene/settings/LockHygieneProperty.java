package io.lockhygiene.settings;

import java.util.Locale;

/** Every configuration key LockHygiene knows, with its default and allowed values. */
public enum LockHygieneProperty {
    MODE("lockhygiene.mode", "emulate", "emulate|detect|rewrite|strict|off",
            "What to do with session-level advisory lock calls under transaction pooling: emulate keeps"
                    + " PostgreSQL's session-lock semantics (the process's lock holder holds them), detect only"
                    + " reports them (and releases a leaked one when its transaction ends), rewrite turns calls inside"
                    + " transactions into their transaction-level forms, strict refuses them, off does nothing. Direct"
                    + " connections and session pooling are the same in every mode"),
    POOL_MODE("lockhygiene.poolMode", "auto", "auto|transaction|session",
            "How the server is reached; auto treats any pooler as transaction pooling"),
    LEAK_CHECK("lockhygiene.leakCheck", "tracked", "tracked|always|never",
            "When to look for leaked session locks: after statements that touched them, always, or never"),
    LEAK_CHECK_SAMPLE("lockhygiene.leakCheckSample", "0.005", "0..1|<n>%",
            "With leakCheck=tracked under transaction pooling: the share of the other transaction ends that are"
                    + " checked too (riding in their COMMIT), to find session locks taken where no SQL shows them"
                    + " (PL/pgSQL, triggers, DO blocks); 0 turns it off"),
    LOG_SQL("lockhygiene.logSql", "truncate", "truncate|full|none",
            "How much SQL text goes into logs and events (truncate: 200 characters)"),
    SKIP_LOCKED("lockhygiene.skipLocked", "warn", "warn|strict|off",
            "FOR UPDATE ... SKIP LOCKED pinned to one row by a unique key: warn, reject before sending, or ignore"),
    REPORT("lockhygiene.report", "", "<file path>",
            "JVM-wide: append every event as one JSON object per line to this file"),
    FAIL_ON_VIOLATION("lockhygiene.failOnViolation", "false", "true|false",
            "JVM-wide: at exit, print a summary and exit with status 3 when a violation was detected"),
    LOCK_TIMEOUT("lockhygiene.lockTimeout", "0", "0|<n>ms|<n>s|<n>m",
            "emulate: longest wait of a blocking pg_advisory_lock before SQLState 55P03; 0 waits as long as"
                    + " PostgreSQL would (forever)"),
    HOLDER_URL("lockhygiene.holderUrl", "auto", "auto|pooler|jdbc:postgresql://...",
            "emulate: where the process's lock holder connects: auto (the server's own address when the"
                    + " application reaches it through a pooler and it answers, else the pooler), pooler (the"
                    + " application's own route), or a pgjdbc URL (the server, or a session-mode PgBouncer entry)"),
    HOLDER_SESSIONS("lockhygiene.holderSessions", "1", "1..16",
            "emulate: how many main sessions the process's lock holder spreads its keys over, per database; each"
                    + " is one server connection, opened when a key of its share is first taken. More of them let"
                    + " many workers' locks and unlocks go in parallel instead of queueing for one session. A holder"
                    + " through the application's own pooler keeps one (each would pin a pooled server)"),
    HOLDER_LINGER("lockhygiene.holderLinger", "10s", "0|<n>ms|<n>s|<n>m",
            "emulate: how long a lock holder that holds nothing and waits for nothing keeps its server sessions;"
                    + " then they close (their seal and the watchdog go with them) and the next lock opens them"
                    + " again. Long enough that a job loop locking every few seconds keeps its session, short"
                    + " enough that an idle fleet holds no connection; 0 closes them as soon as the last lock goes"),
    AGENT_WATCH("lockhygiene.agentWatch", "auto", "auto|always",
            "JVM-wide, the agent only: auto loads and edits the class path's pgjdbc Driver (and HikariCP's and"
                    + " DBCP2's pool classes, when the class path has them) in premain and stops watching class"
                    + " loading, which spares every later class load the JVM's hook; always keeps watching every"
                    + " class loader (for a second pgjdbc loaded later by another class loader)");

    public static final String PREFIX = "lockhygiene.";

    private final String key;
    private final String defaultValue;
    private final String allowed;
    private final String description;

    LockHygieneProperty(String key, String defaultValue, String allowed, String description) {
        this.key = key;
        this.defaultValue = defaultValue;
        this.allowed = allowed;
        this.description = description;
    }

    public String key() {
        return key;
    }

    /** The environment variable: upper case, dots become underscores (LOCKHYGIENE_POOLMODE). */
    public String envName() {
        return key.replace('.', '_').toUpperCase(Locale.ROOT);
    }

    public String defaultValue() {
        return defaultValue;
    }

    public String[] allowedValues() {
        return allowed.split("\\|");
    }

    public String description() {
        return description;
    }

    /**
     * True for the keys that act on the whole JVM (the report file, the exit status, the agent's class-load
     * watch), not on one connection.
     */
    public boolean isJvmWide() {
        return this == REPORT || this == FAIL_ON_VIOLATION || this == AGENT_WATCH;
    }

    /** The setting for a full key (case-sensitive, as written in docs), or null. */
    public static LockHygieneProperty byKey(String key) {
        for (LockHygieneProperty s : values()) {
            if (s.key.equals(key)) {
                return s;
            }
        }
        return null;
    }
}
