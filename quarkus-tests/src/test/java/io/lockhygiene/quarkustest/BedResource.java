package io.lockhygiene.quarkustest;

import java.util.Map;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

/** The test bed's transaction-mode PgBouncer as both datasources' server (the bed closes itself at JVM exit). */
public class BedResource implements QuarkusTestResourceLifecycleManager {
    @Override
    public Map<String, String> start() {
        TestBed bed = TestBed.shared();
        String url = bed.url(Route.TRANSACTION_POOL);
        String user = bed.endpoints().user();
        String password = bed.endpoints().password();
        return Map.of(
                "quarkus.datasource.jdbc.url", url,
                "quarkus.datasource.username", user,
                "quarkus.datasource.password", password,
                "quarkus.datasource.plain.jdbc.url", url,
                "quarkus.datasource.plain.username", user,
                "quarkus.datasource.plain.password", password);
    }

    @Override
    public void stop() {
        // the bed is shared by the JVM's tests and torn down at its exit
    }
}
