package io.lockhygiene.it.r2dbc;

import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import reactor.blockhound.BlockHound;

/**
 * Installs BlockHound once for the R2DBC tests' JVM: any blocking call (a socket read, a sleep, a lock wait) on
 * a thread Reactor or Netty marks non-blocking fails with {@code BlockingOperationError} where it happens, so a
 * blocking call of LockHygiene's on an event loop fails the test that made it. Log output is allowed: where an
 * application writes its logs is its own choice (an asynchronous appender, in reactive services).
 */
public final class BlockHoundExtension implements BeforeAllCallback {
    private static final AtomicBoolean INSTALLED = new AtomicBoolean();

    @Override
    public void beforeAll(ExtensionContext context) {
        if (INSTALLED.compareAndSet(false, true)) {
            BlockHound.builder()
                    .allowBlockingCallsInside("org.slf4j.simple.SimpleLogger", "log")
                    .allowBlockingCallsInside("org.slf4j.simple.OutputChoice", "getTargetPrintStream")
                    .install();
        }
    }
}
