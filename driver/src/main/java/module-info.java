/**
 * LockHygiene's driver: the API is {@code io.lockhygiene} (the driver, the DataSource wrapper, the counters),
 * {@code io.lockhygiene.events}, {@code io.lockhygiene.settings} and {@code io.lockhygiene.monitor}. Every
 * {@code internal} package is shared only with LockHygiene's own modules (the agent, the CLI, the Spring Boot
 * starter, the R2DBC front end), by name: it is not API and changes without notice.
 */
module io.lockhygiene {
    requires java.sql;
    requires java.management;
    requires java.logging;
    requires static java.naming; // pgjdbc's DataSources are Referenceable
    requires org.postgresql.jdbc; // provided by the application, needed at run time
    requires static org.slf4j;
    requires net.sf.jsqlparser;
    requires static flyway.core;
    requires static io.lockhygiene.build; // the forwarding annotation (source retention)
    requires static java.compiler; // @Generated on the generated forwarders (source retention)

    exports io.lockhygiene;
    exports io.lockhygiene.events;
    exports io.lockhygiene.settings;
    exports io.lockhygiene.monitor;

    // the agent gives an unchanged service the driver's connections; the CLI reads SQL, pg_locks and rules with
    // the driver's own code; the starter switches the process reports (none of these is API)
    exports io.lockhygiene.internal.jdbc to io.lockhygiene.agent;
    exports io.lockhygiene.internal.placement to io.lockhygiene.agent, io.lockhygiene.r2dbc;
    exports io.lockhygiene.internal.policy to io.lockhygiene.agent, io.lockhygiene.cli, io.lockhygiene.r2dbc;
    exports io.lockhygiene.internal.events to io.lockhygiene.agent, io.lockhygiene.spring;
    exports io.lockhygiene.internal.log to io.lockhygiene.agent, io.lockhygiene.cli, io.lockhygiene.r2dbc;
    exports io.lockhygiene.internal.settings to io.lockhygiene.agent, io.lockhygiene.cli, io.lockhygiene.r2dbc;
    exports io.lockhygiene.internal.sql to io.lockhygiene.cli, io.lockhygiene.r2dbc;
    exports io.lockhygiene.internal.lint to io.lockhygiene.cli;
    exports io.lockhygiene.internal.leak to io.lockhygiene.cli, io.lockhygiene.r2dbc;
    exports io.lockhygiene.internal.util to io.lockhygiene.cli;
    // the R2DBC front end: the same scanner, policy, per-connection emulation and holder (one core, two front ends)
    exports io.lockhygiene.internal.session to io.lockhygiene.r2dbc;
    exports io.lockhygiene.internal.emulate to io.lockhygiene.r2dbc;
    exports io.lockhygiene.internal.holder to io.lockhygiene.r2dbc;
    exports io.lockhygiene.internal.shape to io.lockhygiene.r2dbc;
    // Flyway's plugin (a jdbc:lockhygiene: URL for Flyway) is found on the class path, through
    // META-INF/services: a "provides" here would make Flyway required on the module path.

    provides java.sql.Driver with io.lockhygiene.LockHygieneDriver;
}
