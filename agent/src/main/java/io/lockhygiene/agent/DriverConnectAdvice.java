package io.lockhygiene.agent;

import java.sql.Connection;
import java.sql.Driver;
import java.util.Properties;

import net.bytebuddy.asm.Advice;

/** Inlined at the exit of org.postgresql.Driver.connect(String, Properties). */
final class DriverConnectAdvice {

    private DriverConnectAdvice() {
    }

    @Advice.OnMethodExit(suppress = Throwable.class)
    static void exit(@Advice.This Driver driver, @Advice.Argument(0) String url, @Advice.Argument(1) Properties info,
                     @Advice.Return(readOnly = false) Connection connection) {
        connection = AgentHooks.onConnect(connection, driver, url, info);
    }
}
