package io.lockhygiene.internal.jdbc;

import java.sql.CallableStatement;

import io.lockhygiene.build.Forwarding;

/** A {@link java.sql.CallableStatement}: the prepared-statement behaviour, every out-parameter method forwarded. */
@Forwarding(leaf = "GeneratedCallableStatement")
abstract class GuardedCallableStatement extends GuardedPreparedStatement<CallableStatement>
        implements CallableStatement {
    GuardedCallableStatement(CallableStatement delegate, LockHygieneConnection connection, StatementPlan plan) {
        super(delegate, connection, plan);
    }
}
