package io.lockhygiene.it.r2dbc;

import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import reactor.blockhound.BlockHound;

/**
 * Installs BlockHound once for the R2DBC tests' JVM: any blocking call (a socket read, a sleep, a lock wait) on
 * a thread Reactor or Netty marks non-blocking fails with {@code BlockingOperationError} where it happens, so a
 * blocking call of LockHygiene's on an event loop fails the test that made it. Allowed: log output (where an
 * application writes its logs is its own choice: an asynchronous appender, in reactive services) and the
 * driver's SCRAM nonce (r2dbc-postgresql's, not ours).
 */
public final class BlockHoundExtension implements BeforeAllCallback {
    private static final AtomicBoolean INSTALLED = new AtomicBoolean();

    @Override
    public void beforeAll(ExtensionContext context) {
        if (INSTALLED.compareAndSet(false, true)) {
            // install(...) also loads the integrations on the class path (Reactor's: its non-blocking threads, and
            // Netty's event loops through them); the builder alone would not
            BlockHound.install(builder -> builder
                    .allowBlockingCallsInside("org.slf4j.simple.SimpleLogger", "log")
                    // r2dbc-postgresql's own: its SCRAM login draws a nonce from SecureRandom (/dev/urandom) on the
                    // event loop, with or without LockHygiene
                    .allowBlockingCallsInside("com.ongres.scram.common.ScramFunctions", "nonce")
                    // an idle scheduler worker waiting for its next task blocks nothing (Reactor allows the
                    // executor queue's take, but with JDK 17 a timed wait there was still flagged once, which
                    // left the scheduler's executor broken for the rest of the JVM)
                    .allowBlockingCallsInside("java.util.concurrent.ThreadPoolExecutor", "getTask"));
        }
    }
}
