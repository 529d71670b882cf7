package io.lockhygiene.internal.flyway;

import java.sql.Connection;
import java.util.Properties;

import org.flywaydb.core.api.ResourceProvider;
import org.flywaydb.core.api.configuration.Configuration;
import org.flywaydb.core.internal.database.DatabaseType;
import org.flywaydb.core.internal.database.base.BaseDatabaseType;
import org.flywaydb.core.internal.database.base.Database;
import org.flywaydb.core.internal.jdbc.JdbcConnectionFactory;
import org.flywaydb.core.internal.jdbc.StatementInterceptor;
import org.flywaydb.core.internal.parser.Parser;
import org.flywaydb.core.internal.parser.ParsingContext;

/**
 * Lets Flyway take a {@code jdbc:lockhygiene:postgresql:} URL ({@code Flyway.configure().dataSource(url, ...)},
 * {@code spring.flyway.url}). Flyway picks a database type by URL prefix to find the JDBC driver, and by
 * the connection's metadata for everything else: this type claims only our URL prefix and names our
 * driver; the connection then says "PostgreSQL" and Flyway's own PostgreSQL module does the rest.
 * Registered through Flyway's plugin mechanism (META-INF/services/org.flywaydb.core.extensibility.Plugin).
 *
 * <p>Its superclass is flyway-core's, not the PostgreSQL module's: Flyway loads every registered plugin
 * class, and a superclass missing from the class path (a MySQL-only service that has our jar) would
 * break Flyway for that service. The PostgreSQL module is looked up only when this type is asked for
 * what only it can give.
 */
public final class LockHygieneDatabaseType extends BaseDatabaseType {
    private static final String PREFIX = "jdbc:lockhygiene:postgresql:";
    private static final String POSTGRES_TYPE = "org.flywaydb.database.postgresql.PostgreSQLDatabaseType";

    private volatile DatabaseType postgres;

    @Override
    public String getName() {
        return "PostgreSQL (LockHygiene)";
    }

    @Override
    public int getNullType() {
        return java.sql.Types.NULL;
    }

    @Override
    public boolean handlesJDBCUrl(String url) {
        return url != null && url.regionMatches(true, 0, PREFIX, 0, PREFIX.length());
    }

    @Override
    public String getDriverClass(String url, ClassLoader classLoader) {
        return "io.lockhygiene.LockHygieneDriver";
    }

    /** Never: the connection says "PostgreSQL", and Flyway's PostgreSQL module takes it from there. */
    @Override
    public boolean handlesDatabaseProductNameAndVersion(String databaseProductName, String databaseProductVersion,
                                                        Connection connection) {
        return false;
    }

    @Override
    public Database createDatabase(Configuration configuration, JdbcConnectionFactory jdbcConnectionFactory,
                                   StatementInterceptor statementInterceptor) {
        return postgres().createDatabase(configuration, jdbcConnectionFactory, statementInterceptor);
    }

    @Override
    public Parser createParser(Configuration configuration, ResourceProvider resourceProvider,
                               ParsingContext parsingContext) {
        return postgres().createParser(configuration, resourceProvider, parsingContext);
    }

    @Override
    public void setDefaultConnectionProps(String url, Properties props, ClassLoader classLoader) {
        postgres().setDefaultConnectionProps(url, props, classLoader);
    }

    private DatabaseType postgres() {
        DatabaseType p = postgres;
        if (p == null) {
            try {
                p = (DatabaseType) Class.forName(POSTGRES_TYPE, true, LockHygieneDatabaseType.class.getClassLoader())
                        .getDeclaredConstructor().newInstance();
            } catch (ReflectiveOperationException | LinkageError e) {
                throw new IllegalStateException("A jdbc:lockhygiene:postgresql: URL in Flyway needs Flyway's PostgreSQL"
                        + " module on the class path: add org.flywaydb:flyway-database-postgresql (" + e + ")", e);
            }
            postgres = p;
        }
        return p;
    }
}
