package io.lockhygiene.it.bed;

import java.util.EnumMap;
import java.util.Map;
import java.util.UUID;

import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.Transferable;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * A PostgreSQL container and two PgBouncer containers on a private network, used when a Docker engine
 * answers. The PgBouncers get the same pgbouncer.ini as the local-binary bed (PgBouncerConfig); only
 * the image's entry point is bypassed, so the image's own configuration conventions do not matter.
 */
final class ContainerBed implements RunningBed {
    static final String POSTGRES_IMAGE = "postgres:15-alpine";
    static final String PGBOUNCER_IMAGE = "edoburu/pgbouncer:v1.23.1-p3";

    private final Network network;
    private final PostgreSQLContainer postgres;
    private final GenericContainer<?> transactionPool;
    private final GenericContainer<?> sessionPool;
    private final BedEndpoints endpoints;

    /** Asks Testcontainers without letting it hang: no socket, no engine. */
    static boolean dockerAnswers() {
        boolean socket = java.nio.file.Files.exists(java.nio.file.Paths.get("/var/run/docker.sock"))
                || System.getenv("DOCKER_HOST") != null;
        if (!socket) {
            return false;
        }
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }

    @SuppressWarnings("resource") // closed in close()
    ContainerBed() {
        String password = "lh-" + UUID.randomUUID();
        network = Network.newNetwork();
        postgres = new PostgreSQLContainer(POSTGRES_IMAGE)
                .withDatabaseName(LocalBinariesBed.DATABASE)
                .withUsername(LocalBinariesBed.USER)
                .withPassword(password)
                .withNetwork(network)
                .withNetworkAliases("pg")
                .withEnv("POSTGRES_INITDB_ARGS", "--auth-host=scram-sha-256");
        postgres.start();
        transactionPool = bouncer("transaction", password);
        sessionPool = bouncer("session", password);
        Map<Route, String> urls = new EnumMap<>(Route.class);
        urls.put(Route.DIRECT, postgres.getJdbcUrl());
        urls.put(Route.TRANSACTION_POOL, poolUrl(transactionPool));
        urls.put(Route.SESSION_POOL, poolUrl(sessionPool));
        endpoints = new BedEndpoints("Testcontainers (" + POSTGRES_IMAGE + ", " + PGBOUNCER_IMAGE + ")", urls,
                LocalBinariesBed.USER, password, "PostgreSQL from " + POSTGRES_IMAGE, "PgBouncer from " + PGBOUNCER_IMAGE);
    }

    private GenericContainer<?> bouncer(String mode, String password) {
        String ini = PgBouncerConfig.ini(mode, "0.0.0.0", 6432, "pg", 5432, LocalBinariesBed.DATABASE,
                LocalBinariesBed.USER, "/tmp/lh/userlist.txt", null, null);
        GenericContainer<?> c = new GenericContainer<>(PGBOUNCER_IMAGE)
                .withNetwork(network)
                .withExposedPorts(6432)
                .withCopyToContainer(Transferable.of(ini), "/tmp/lh/pgbouncer.ini")
                .withCopyToContainer(Transferable.of(PgBouncerConfig.authFile(LocalBinariesBed.USER, password)),
                        "/tmp/lh/userlist.txt")
                .withCreateContainerCmdModifier(cmd -> cmd.withEntrypoint("pgbouncer", "/tmp/lh/pgbouncer.ini"))
                .waitingFor(Wait.forListeningPort());
        c.start();
        return c;
    }

    private static String poolUrl(GenericContainer<?> c) {
        return "jdbc:postgresql://" + c.getHost() + ":" + c.getMappedPort(6432) + "/" + LocalBinariesBed.DATABASE
                + "?prepareThreshold=0";
    }

    @Override
    public BedEndpoints endpoints() {
        return endpoints;
    }

    @Override
    public void close() {
        for (AutoCloseable c : new AutoCloseable[] {sessionPool, transactionPool, postgres, network}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception ignored) {
                // Ryuk removes whatever is left
            }
        }
    }
}
