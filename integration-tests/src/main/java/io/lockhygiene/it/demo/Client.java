package io.lockhygiene.it.demo;

import java.sql.Connection;
import java.sql.SQLException;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;

/** A way to open a connection to the bed: plain pgjdbc, or LockHygiene with some settings (demo, benchmarks). */
public interface Client {
    String label();

    Connection open(TestBed bed, Route route) throws SQLException;

    static Client plain() {
        return of("plain pgjdbc", TestBed::connect);
    }

    /** The LockHygiene driver with these {@code lockhygiene.*} parameters on every route. */
    static Client lockHygiene(String label, String... params) {
        return of(label, (bed, route) -> bed.connectLockHygiene(route, params));
    }

    /** A labelled opener. */
    static Client of(String label, Opener opener) {
        return new Client() {
            @Override
            public String label() {
                return label;
            }

            @Override
            public Connection open(TestBed bed, Route route) throws SQLException {
                return opener.open(bed, route);
            }
        };
    }

    /** How a client opens its connection. */
    @FunctionalInterface
    interface Opener {
        Connection open(TestBed bed, Route route) throws SQLException;
    }
}
