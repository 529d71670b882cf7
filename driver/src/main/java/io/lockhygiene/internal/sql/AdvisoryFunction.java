package io.lockhygiene.internal.sql;

/**
 * PostgreSQL's advisory lock functions. Session-level ones outlive COMMIT and are what breaks behind
 * transaction pooling; the {@code _xact_} ones are released at transaction end and are hygienic.
 */
public enum AdvisoryFunction {
    LOCK("pg_advisory_lock", Scope.SESSION, Kind.ACQUIRE, false, false, "pg_advisory_xact_lock"),
    LOCK_SHARED("pg_advisory_lock_shared", Scope.SESSION, Kind.ACQUIRE, true, false, "pg_advisory_xact_lock_shared"),
    TRY_LOCK("pg_try_advisory_lock", Scope.SESSION, Kind.ACQUIRE, false, true, "pg_try_advisory_xact_lock"),
    TRY_LOCK_SHARED("pg_try_advisory_lock_shared", Scope.SESSION, Kind.ACQUIRE, true, true,
            "pg_try_advisory_xact_lock_shared"),
    // An unlock of a lock that rewrite turned into an xact lock: taking the same lock again inside the
    // transaction returns true and changes nothing (locks stack and all go at transaction end), with
    // the same argument and result types as the unlock. So the rewrite stays a splice of one name.
    UNLOCK("pg_advisory_unlock", Scope.SESSION, Kind.RELEASE, false, false, "pg_try_advisory_xact_lock"),
    UNLOCK_SHARED("pg_advisory_unlock_shared", Scope.SESSION, Kind.RELEASE, true, false,
            "pg_try_advisory_xact_lock_shared"),
    // void, no arguments, no effect on locks: the closest built-in stand-in for a no-op unlock_all.
    UNLOCK_ALL("pg_advisory_unlock_all", Scope.SESSION, Kind.RELEASE_ALL, false, false, "pg_stat_clear_snapshot"),
    XACT_LOCK("pg_advisory_xact_lock", Scope.TRANSACTION, Kind.ACQUIRE, false, false, null),
    XACT_LOCK_SHARED("pg_advisory_xact_lock_shared", Scope.TRANSACTION, Kind.ACQUIRE, true, false, null),
    TRY_XACT_LOCK("pg_try_advisory_xact_lock", Scope.TRANSACTION, Kind.ACQUIRE, false, true, null),
    TRY_XACT_LOCK_SHARED("pg_try_advisory_xact_lock_shared", Scope.TRANSACTION, Kind.ACQUIRE, true, true, null);

    public enum Scope { SESSION, TRANSACTION }

    public enum Kind { ACQUIRE, RELEASE, RELEASE_ALL }

    private static final AdvisoryFunction[] ALL = values();

    private final String sqlName;
    private final Scope scope;
    private final Kind kind;
    private final boolean shared;
    private final boolean tryLock;
    private final String rewriteTo;

    AdvisoryFunction(String sqlName, Scope scope, Kind kind, boolean shared, boolean tryLock, String rewriteTo) {
        this.sqlName = sqlName;
        this.scope = scope;
        this.kind = kind;
        this.shared = shared;
        this.tryLock = tryLock;
        this.rewriteTo = rewriteTo;
    }

    /** The function's name as PostgreSQL knows it (lower case). */
    public String sqlName() {
        return sqlName;
    }

    public boolean isSessionLevel() {
        return scope == Scope.SESSION;
    }

    public Kind kind() {
        return kind;
    }

    public boolean isAcquire() {
        return kind == Kind.ACQUIRE;
    }

    public boolean isShared() {
        return shared;
    }

    public boolean isTry() {
        return tryLock;
    }

    /** True when the function returns boolean (the try forms and the unlocks); the others return void. */
    public boolean returnsBoolean() {
        return tryLock || kind == Kind.RELEASE;
    }

    /** Number of key arguments of its forms: 0 for unlock_all, otherwise 1 (bigint) or 2 (int, int). */
    public boolean takesKey() {
        return kind != Kind.RELEASE_ALL;
    }

    /** The name {@code rewrite} mode splices in for this session-level function, null for xact ones. */
    public String rewriteTo() {
        return rewriteTo;
    }

    /**
     * The function named by {@code text[start, end)}: case-folded ASCII when bare (as PostgreSQL folds
     * unquoted identifiers), exact when quoted. Null if it is none of ours.
     */
    public static AdvisoryFunction byName(CharSequence text, int start, int end, boolean quoted) {
        int len = end - start;
        for (AdvisoryFunction f : ALL) {
            String n = f.sqlName;
            if (n.length() != len) {
                continue;
            }
            boolean match = true;
            for (int i = 0; i < len && match; i++) {
                char c = text.charAt(start + i);
                if (!quoted && c >= 'A' && c <= 'Z') {
                    c = (char) (c + 32);
                }
                match = c == n.charAt(i);
            }
            if (match) {
                return f;
            }
        }
        return null;
    }
}
