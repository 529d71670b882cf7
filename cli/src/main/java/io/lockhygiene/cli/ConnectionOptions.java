package io.lockhygiene.cli;

import java.sql.SQLException;

import picocli.CommandLine.Option;

/** How doctor and monitor reach the database (see {@link Database}). */
final class ConnectionOptions {
    @Option(names = "--url", required = true, paramLabel = "JDBC_URL",
            description = "the database (jdbc:postgresql: or jdbc:lockhygiene:postgresql:)")
    String url;

    @Option(names = "--user", paramLabel = "U", description = "user (or in the URL, or PGUSER)")
    String user;

    @Option(names = "--password", paramLabel = "P", description = "password (or in the URL, or PGPASSWORD)")
    String password;

    @Option(names = "--pgjdbc", paramLabel = "JAR", description = "another pgjdbc to connect with (default:"
            + " LOCKHYGIENE_PGJDBC, else the one in lockhygiene-cli.jar)")
    String pgjdbc;

    Database open() throws SQLException {
        return Database.from(url, user, password, pgjdbc);
    }
}
