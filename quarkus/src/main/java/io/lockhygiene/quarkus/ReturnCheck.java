package io.lockhygiene.quarkus;

import java.sql.Connection;

import io.agroal.api.AgroalPoolInterceptor;
import io.lockhygiene.LockHygienePoolDriver;
import jakarta.inject.Singleton;

/**
 * Agroal's return of a connection of the default datasource is LockHygiene's return event: the return check
 * ({@link LockHygienePoolDriver#returned}). Quarkus applies an {@code AgroalPoolInterceptor} bean without a
 * datasource qualifier to the default datasource; a named datasource needs a bean of its own with
 * {@code @io.quarkus.agroal.DataSource("name")} (docs/front-ends.md).
 */
@Singleton
public class ReturnCheck implements AgroalPoolInterceptor {
    @Override
    public void onConnectionReturn(Connection connection) {
        LockHygienePoolDriver.returned(connection);
    }
}
