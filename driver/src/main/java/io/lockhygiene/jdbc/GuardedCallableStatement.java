package io.lockhygiene.jdbc;

import java.sql.CallableStatement;

/** A {@link java.sql.CallableStatement}: the prepared-statement behaviour, every out-parameter method forwarded. */
final class GuardedCallableStatement extends CallableStatementDelegate<CallableStatement> {
    GuardedCallableStatement(CallableStatement delegate, LockHygieneConnection connection, StatementPlan plan) {
        super(delegate, connection, plan);
    }
}
