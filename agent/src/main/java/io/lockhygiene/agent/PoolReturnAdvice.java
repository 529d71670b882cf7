package io.lockhygiene.agent;

import java.sql.Connection;

import net.bytebuddy.asm.Advice;

/** Inlined at the entry of a pool's close() of a borrowed connection (HikariCP, Commons DBCP2). */
final class PoolReturnAdvice {

    private PoolReturnAdvice() {
    }

    @Advice.OnMethodEnter(suppress = Throwable.class)
    static void enter(@Advice.This Connection pooled) {
        AgentHooks.onPoolReturn(pooled);
    }
}
