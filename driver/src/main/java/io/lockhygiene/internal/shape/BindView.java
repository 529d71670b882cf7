package io.lockhygiene.internal.shape;

import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * A statement's bind parameters as each front end recorded them (JDBC's setters, R2DBC's {@code bind}), in the
 * one form the core reads: what set a parameter, with which arguments. Indexes are 1-based, as JDBC's are.
 */
public interface BindView {
    /** The setter's name ("setInt", "setObject", "setNull", ...), or null when the parameter was not set. */
    String method(int index);

    /** The setter's argument {@code n} after the index (0: the value; for setNull, the SQL type). */
    Object arg(int index, int n);

    /**
     * The values and setters of {@code indexes}, as text: equal signatures give equal key values (the key cache
     * of immutable key expressions). Null when a value cannot be told by its text (a stream, a blob).
     */
    String valueSignature(int[] indexes);

    /** Which setter set each of the first {@code count} parameters (the types PostgreSQL resolves them with). */
    String typeSignature(int count);

    /**
     * Sets {@code target}'s parameter i + 1 to parameter {@code indexes[i]}, as the application set it (for a
     * statement the core sends in the application's name: a key's value, a row's keys); one never set stays
     * unset, so the server says what it says of the application's own statement.
     */
    void applyTo(PreparedStatement target, int[] indexes) throws SQLException;
}
