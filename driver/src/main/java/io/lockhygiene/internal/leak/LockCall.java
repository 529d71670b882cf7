package io.lockhygiene.internal.leak;

import io.lockhygiene.internal.sql.AdvisoryFunction;

/** A session-level lock call this connection sent, kept until the next leak check for attribution. */
public final class LockCall {
    private final AdvisoryFunction function;
    private final String sql;
    private final String argumentText;
    private final Throwable takenAt;

    public LockCall(AdvisoryFunction function, String sql, String argumentText, Throwable takenAt) {
        this.function = function;
        this.sql = sql;
        this.argumentText = argumentText;
        this.takenAt = takenAt;
    }

    public AdvisoryFunction function() {
        return function;
    }

    /** The original SQL text (cut only when logged). */
    public String sql() {
        return sql;
    }

    public String argumentText() {
        return argumentText;
    }

    /** Where the application sent it. */
    public Throwable takenAt() {
        return takenAt;
    }
}
