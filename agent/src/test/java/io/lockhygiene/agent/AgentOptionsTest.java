package io.lockhygiene.agent;

import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AgentOptionsTest {

    @Test
    void driverKeysWithoutThePrefix() {
        assertEquals(Map.of("lockhygiene.mode", "emulate", "lockhygiene.poolMode", "transaction"),
                AgentOptions.parse("mode=emulate, poolMode=transaction"));
        assertEquals(Map.of("lockhygiene.leakCheck", "always"), AgentOptions.parse("lockhygiene.leakCheck=always"));
        assertEquals(Map.of(), AgentOptions.parse(null));
        assertEquals(Map.of(), AgentOptions.parse(" "));
        assertThrows(IllegalArgumentException.class, () -> AgentOptions.parse("emulate"));
    }

    @Test
    void targetsAreThreeClassesOnly() {
        assertTrue(PgjdbcTransformer.isTarget("org/postgresql/Driver"));
        assertTrue(PgjdbcTransformer.isTarget("com/zaxxer/hikari/pool/ProxyConnection"));
        assertTrue(PgjdbcTransformer.isTarget("org/apache/commons/dbcp2/PoolableConnection"));
        assertEquals(false, PgjdbcTransformer.isTarget("org/postgresql/jdbc/PgConnection"));
    }
}
