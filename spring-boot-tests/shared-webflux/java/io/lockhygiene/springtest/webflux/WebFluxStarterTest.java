package io.lockhygiene.springtest.webflux;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import io.lockhygiene.r2dbc.LockHygieneConnectionFactory;
import io.r2dbc.spi.ConnectionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootVersion;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The starter in a real Spring Boot WebFlux service on R2DBC (this module's Boot version), through the test bed's
 * transaction-mode PgBouncer: r2dbc-pool with 4 connections, 8 clients at once asking for the guarded job. With
 * the dependency and one property ({@code lockhygiene.mode=emulate}) the job never runs twice at once and no
 * lock is left; the same service without LockHygiene ({@code lockhygiene.enabled=false}) shows the bug.
 */
@ExtendWith(TestBedExtension.class)
class WebFluxStarterTest {
    private static final int CLIENTS = 8;
    private static final int REQUESTS = 10;
    private final TestBed bed = TestBed.shared();

    private ConfigurableApplicationContext start(String setting) {
        URI u = URI.create(bed.url(Route.TRANSACTION_POOL).substring("jdbc:".length()));
        return new SpringApplication(ReactiveJobApplication.class).run(
                "--server.port=0",
                "--spring.main.banner-mode=off",
                "--server.shutdown=immediate", // the clients' kept-alive connections are not requests to wait for
                "--spring.r2dbc.url=r2dbc:postgresql://" + u.getHost() + ":" + u.getPort() + u.getPath(),
                "--spring.r2dbc.username=" + bed.endpoints().user(),
                "--spring.r2dbc.password=" + bed.endpoints().password(),
                "--spring.r2dbc.pool.initial-size=1",
                "--spring.r2dbc.pool.max-size=4",
                // PgBouncer 1.18: no protocol-level prepared statements
                "--spring.r2dbc.properties.preparedStatementCacheQueries=0",
                setting);
    }

    /** 8 clients, each asking for the job 10 times; returns how many requests answered 200. */
    private static int clients(int port, long key) throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        AtomicInteger ok = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(CLIENTS);
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
            Thread t = new Thread(() -> {
                try {
                    for (int i = 0; i < REQUESTS; i++) {
                        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                                + "/job/" + key)).timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
                        if (r.statusCode() == 200) {
                            ok.incrementAndGet();
                        }
                    }
                } catch (Exception e) {
                    System.out.println("[webflux] client failed: " + e);
                } finally {
                    done.countDown();
                }
            });
            threads.add(t);
            t.start();
        }
        assertTrue(done.await(180, TimeUnit.SECONDS), "every client finished");
        return ok.get();
    }

    @Test
    void oneDependencyAndOnePropertyGiveTheServiceMutualExclusion() throws Exception {
        long key = SpringBootVersion.getVersion().startsWith("3") ? 982_301 : 982_401;
        ReactiveJobApplication.Tally control;
        int controlOk;
        try (ConfigurableApplicationContext app = start("--lockhygiene.enabled=false")) {
            controlOk = clients(port(app), key);
            control = app.getBean(ReactiveJobApplication.Tally.class);
        }
        int leftByControl = bed.admin().holdersOf(key).size();
        bed.admin().terminateHoldersOf(key);

        ReactiveJobApplication.Tally ours;
        int oursOk;
        try (ConfigurableApplicationContext app = start("--lockhygiene.mode=emulate")) {
            assertTrue(app.getBean(ConnectionFactory.class) instanceof LockHygieneConnectionFactory,
                    "Boot's ConnectionFactory is wrapped");
            oursOk = clients(port(app), key);
            ours = app.getBean(ReactiveJobApplication.Tally.class);
            List<String> holders = bed.admin().applicationNamesHolding(key);
            assertEquals(List.of(), holders, "nothing held once the requests are done");
        }
        System.out.println("[webflux, Boot " + SpringBootVersion.getVersion() + "] without LockHygiene: " + controlOk
                + " answers, runs " + control.runs + ", overlapping " + control.overlapping + ", failed unlocks "
                + control.failedUnlocks + ", locks left " + leftByControl + "; with lockhygiene.mode=emulate: " + oursOk
                + " answers, runs " + ours.runs + ", overlapping " + ours.overlapping + ", failed unlocks "
                + ours.failedUnlocks);
        assertTrue(control.overlapping.get() + control.failedUnlocks.get() + leftByControl > 0,
                "control: the service shows the bug without LockHygiene");
        assertEquals(CLIENTS * REQUESTS, oursOk, "every request answered");
        assertTrue(ours.runs.get() > 0, "the job ran");
        assertEquals(0, ours.overlapping.get(), "never twice at once");
        assertEquals(0, ours.failedUnlocks.get());
        assertEquals(List.of(), bed.admin().holdersOf(key), "no lock left");
    }

    private static int port(ConfigurableApplicationContext app) {
        return Integer.parseInt(app.getEnvironment().getProperty("local.server.port"));
    }
}
