package io.lockhygiene.internal.emulate;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

import io.lockhygiene.internal.shape.LockShape;
import io.lockhygiene.internal.shape.BindView;

/**
 * Before any call of a statement is decided: PostgreSQL's own verdict on a statement that has more than
 * calls on integer keys (a type error, a missing column, a syntax error in text that calls nothing), so
 * that a statement PostgreSQL refuses takes no lock. The server plans it without running it
 * ({@code EXPLAIN}: parse analysis resolves every function and type, nothing volatile is called), once per
 * text and parameter types (kept on the shape, in the one analysis cache); a refusal is PostgreSQL's own
 * exception. (pgjdbc's describe-only round trip
 * would name a server-side statement, which a transaction pooler before PgBouncer 1.21 cannot keep.)
 */
public final class Validation {

    private Validation() {
    }

    /** PostgreSQL's verdict, asked once per shape and parameter types (the shape keeps what it accepted). */
    static void check(LockShape shape, BindView binds, Connection raw) throws SQLException {
        String types = binds == null ? "" : binds.typeSignature(shape.parameterCount());
        if (shape.accepted(types)) {
            return;
        }
        describe(shape.sql(), binds, shape.parameterCount(), raw);
        shape.accept(types);
    }

    /** Planned only: PostgreSQL's error if it refuses the text, nothing run either way. */
    public static void describe(String sql, BindView binds, int parameters, Connection raw) throws SQLException {
        try (PreparedStatement ps = raw.prepareStatement("EXPLAIN " + sql)) {
            if (binds != null) {
                int[] all = new int[parameters];
                for (int i = 0; i < parameters; i++) {
                    all[i] = i + 1;
                }
                binds.applyTo(ps, all);
            }
            ps.executeQuery().close();
        }
    }
}
