package io.lockhygiene.r2dbc.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;

import io.r2dbc.spi.R2dbcBadGrammarException;
import io.r2dbc.spi.R2dbcException;
import io.r2dbc.spi.R2dbcNonTransientResourceException;
import io.r2dbc.spi.R2dbcRollbackException;
import io.r2dbc.spi.R2dbcTransientResourceException;
import org.junit.jupiter.api.Test;

/** The core's SQLStates as the R2DBC exceptions r2dbc-postgresql raises for them. */
class R2dbcErrorsTest {
    private static R2dbcException of(String state) {
        return R2dbcErrors.of(new SQLException("m " + state, state));
    }

    @Test
    void asR2dbcPostgresqlClassifiesThem() {
        assertTrue(of("40P01") instanceof R2dbcTransientResourceException, "a deadlock is transient");
        assertTrue(of("40001") instanceof R2dbcRollbackException);
        assertTrue(of("08006") instanceof R2dbcNonTransientResourceException, "a lost lock");
        assertTrue(of("0A000") instanceof R2dbcNonTransientResourceException, "a refusal");
        assertTrue(of("42704") instanceof R2dbcBadGrammarException);
        assertTrue(of("55P03") instanceof R2dbcNonTransientResourceException, "a lock timeout");
        assertTrue(of("57014") instanceof R2dbcNonTransientResourceException, "a cancel");
        R2dbcException e = of("08006");
        assertEquals("08006", e.getSqlState());
        assertEquals("m 08006", e.getMessage());
    }

    @Test
    void backToTheCoresReading() {
        SQLException s = new SQLException("x", "42704");
        assertSame(s, R2dbcErrors.toSql(s));
        SQLException back = R2dbcErrors.toSql(R2dbcErrors.of(s));
        assertEquals("42704", back.getSQLState());
        assertEquals("x", back.getMessage());
    }
}
