package io.lockhygiene.it.bed;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.function.Function;

/**
 * Servers the user already runs, named by environment variables. The bed neither starts nor stops
 * them. All five must be set together (the user must be able to read pg_locks and terminate other
 * backends, so a superuser is simplest):
 * <pre>
 * LOCKHYGIENE_TEST_DIRECT_URL            jdbc:postgresql://host:5432/db
 * LOCKHYGIENE_TEST_TRANSACTION_POOL_URL  jdbc:postgresql://host:6432/db?prepareThreshold=0  (pool_mode=transaction)
 * LOCKHYGIENE_TEST_SESSION_POOL_URL      jdbc:postgresql://host:6433/db  (pool_mode=session)
 * LOCKHYGIENE_TEST_USER, LOCKHYGIENE_TEST_PASSWORD
 * </pre>
 * and, optionally, for the tests that run through a PgBouncer of 1.21 or later with prepared statements:
 * <pre>
 * LOCKHYGIENE_TEST_PREPARED_TRANSACTION_POOL_URL  jdbc:postgresql://host:6434/db  (pool_mode=transaction,
 *                                                 max_prepared_statements &gt; 0)
 * </pre>
 */
final class EnvironmentBed implements RunningBed {
    static final String DIRECT = "LOCKHYGIENE_TEST_DIRECT_URL";
    static final String TRANSACTION = "LOCKHYGIENE_TEST_TRANSACTION_POOL_URL";
    static final String SESSION = "LOCKHYGIENE_TEST_SESSION_POOL_URL";
    static final String USER = "LOCKHYGIENE_TEST_USER";
    static final String PASSWORD = "LOCKHYGIENE_TEST_PASSWORD";
    private static final List<String> ALL = List.of(DIRECT, TRANSACTION, SESSION, USER, PASSWORD);

    static final String PREPARED = "LOCKHYGIENE_TEST_PREPARED_TRANSACTION_POOL_URL";

    private final BedEndpoints endpoints;
    private final String preparedUrl;

    private EnvironmentBed(BedEndpoints endpoints, String preparedUrl) {
        this.endpoints = endpoints;
        this.preparedUrl = preparedUrl;
    }

    @Override
    public String preparedPoolUrl() {
        if (preparedUrl == null || preparedUrl.isBlank()) {
            throw new BedException("the test bed from the environment has no " + PREPARED);
        }
        return preparedUrl;
    }

    /** Empty when none of the variables is set; an error when only some are. */
    static Optional<EnvironmentBed> fromEnvironment(Function<String, String> env) {
        List<String> set = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        for (String name : ALL) {
            String value = env.apply(name);
            (value == null || value.isBlank() ? missing : set).add(name);
        }
        if (set.isEmpty()) {
            return Optional.empty();
        }
        if (!missing.isEmpty()) {
            throw new BedException("Test bed from the environment: " + set + " are set but " + missing
                    + " are not; set all of " + ALL + " or none");
        }
        Map<Route, String> urls = new EnumMap<>(Route.class);
        urls.put(Route.DIRECT, env.apply(DIRECT));
        urls.put(Route.TRANSACTION_POOL, env.apply(TRANSACTION));
        urls.put(Route.SESSION_POOL, env.apply(SESSION));
        String user = env.apply(USER);
        String password = env.apply(PASSWORD);
        Properties props = new Properties();
        props.setProperty("user", user);
        props.setProperty("password", password);
        String pgVersion = query(urls.get(Route.DIRECT), props, "SHOW server_version")
                .map(v -> "PostgreSQL " + v).orElse("PostgreSQL (version unreadable)");
        String bouncerVersion = pgbouncerVersion(urls.get(Route.TRANSACTION_POOL), props);
        return Optional.of(new EnvironmentBed(new BedEndpoints("environment variables (" + DIRECT + ", ...)",
                urls, user, password, pgVersion, bouncerVersion), env.apply(PREPARED)));
    }

    /** PgBouncer's admin console answers SHOW VERSION when the user is in admin_users or stats_users. */
    private static String pgbouncerVersion(String poolUrl, Properties props) {
        String adminUrl = poolUrl.replaceFirst("/[^/?]*(\\?|$)", "/pgbouncer$1");
        Properties simple = new Properties();
        simple.putAll(props);
        simple.setProperty("preferQueryMode", "simple");
        simple.setProperty("assumeMinServerVersion", "9.0"); // no SET at connect: the admin console refuses it
        return query(adminUrl, simple, "SHOW VERSION").orElse("PgBouncer (version unreadable: user not in admin_users)");
    }

    private static Optional<String> query(String url, Properties props, String sql) {
        try (Connection c = DriverManager.getConnection(url, props);
             Statement s = c.createStatement();
             var rs = s.executeQuery(sql)) {
            return rs.next() ? Optional.ofNullable(rs.getString(1)) : Optional.empty();
        } catch (SQLException e) {
            return Optional.empty();
        }
    }

    @Override
    public BedEndpoints endpoints() {
        return endpoints;
    }

    @Override
    public void close() {
        // Not ours to stop.
    }
}
