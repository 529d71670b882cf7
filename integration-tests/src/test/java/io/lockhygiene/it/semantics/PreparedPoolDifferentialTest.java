package io.lockhygiene.it.semantics;

import io.lockhygiene.it.bed.Route;

/**
 * The differential tester's fixed base (and its hand-written programs and control) through a PgBouncer of 1.21
 * or later with {@code max_prepared_statements} on and pgjdbc's default {@code prepareThreshold}.
 */
class PreparedPoolDifferentialTest extends DifferentialTest {
    @Override
    Route pooler() {
        return Route.PREPARED_TRANSACTION_POOL;
    }
}
