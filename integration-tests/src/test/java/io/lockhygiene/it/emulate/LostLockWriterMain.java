package io.lockhygiene.it.emulate;

import java.sql.Connection;
import java.sql.DriverManager;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A child JVM's whole program for the agent's run of the lost-lock scenario: an unchanged writer (plain
 * {@code jdbc:postgresql:} URL). Prints "LOCKED" once it holds the key, then writes until its first error
 * or 10 s, and prints "RESULT rows state millis".
 * Arguments: url user password key run style.
 */
public final class LostLockWriterMain {
    private LostLockWriterMain() {
    }

    public static void main(String[] args) throws Exception {
        try (Connection c = DriverManager.getConnection(args[0], args[1], args[2])) {
            CountDownLatch locked = new CountDownLatch(1);
            AtomicBoolean stop = new AtomicBoolean();
            Thread printer = new Thread(() -> {
                try {
                    locked.await();
                    System.out.println("LOCKED " + c.getClass().getName());
                    System.out.flush();
                    Thread.sleep(TimeUnit.SECONDS.toMillis(10));
                    stop.set(true);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            printer.setDaemon(true);
            printer.start();
            LostLockWriter.Result r = LostLockWriter.run(c, Long.parseLong(args[3]), args[4],
                    LostLockWriter.Style.valueOf(args[5]), locked, stop);
            System.out.println("RESULT " + r.committed + " " + r.errorState + " " + r.errorAtMillis + " " + r.errorMessage);
        }
    }
}
