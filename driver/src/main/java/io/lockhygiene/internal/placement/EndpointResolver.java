package io.lockhygiene.internal.placement;

import io.lockhygiene.internal.holder.Holder;
import io.lockhygiene.internal.holder.HolderEndpoint;
import io.lockhygiene.internal.holder.Holders;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.atomic.AtomicBoolean;

import io.lockhygiene.internal.log.EmulateMessages;
import io.lockhygiene.internal.pgjdbc.Pgjdbc;
import io.lockhygiene.internal.log.Log;
import io.lockhygiene.internal.settings.ConnectionUrl;
import io.lockhygiene.settings.Settings;
import io.lockhygiene.internal.util.Urls;

/**
 * Places the process's lock holder for an application endpoint, once per endpoint and setting
 * ({@code lockhygiene.holderUrl}):
 * <ul>
 * <li>{@code auto} (the default): a connection of the holder's own, never one of the application's pool:
 * with what the route knows of how the application connects ({@link HolderRoute#recipes}: the driver's URL
 * and credentials, or what a wrapped pool's configuration says), to the application's own server when it is
 * direct, or, behind a pooler, to the server's own address as the application's backend reports it
 * ({@code inet_server_addr()}, the {@code port} setting, the database); used when it answers and is the same
 * database of the same cluster. Otherwise the application's route (its pooler, or a borrow from its pool),
 * said once at WARN with what was tried and the fix. Where it went and why is said once at INFO.</li>
 * <li>{@code pooler}: the application's own route (as before holderUrl existed).</li>
 * <li>a pgjdbc URL: checked at the first connection of the endpoint: it must answer, reach the same
 * database of the same cluster, and not be a transaction pooler; otherwise {@code connect()} fails with
 * a message that says which and what to do.</li>
 * </ul>
 * The same database of the same cluster: {@code pg_control_system().system_identifier} and the database's
 * oid, or, where the user may not read the control data, the postmaster's start time and the oid.
 *
 * <p>Holders that open connections of their own are shared per database ({@link Holders}); a holder that
 * borrows from a DataSource's pool belongs to that DataSource's placement and goes with it. No lock of ours
 * is held here: the placement's future is run by the first caller, others wait for it (bounded by the
 * probes' timeouts, and by the pool's own for a borrow).
 */
public final class EndpointResolver {
    private EndpointResolver() {
    }

    /**
     * The holder for {@code route}, placed at the endpoint's first connection ({@code app} is that
     * connection, the application's own, used for one query) and then remembered where the route says.
     *
     * @throws SQLException when an explicit {@code holderUrl} is unusable (said in the message)
     */
    public static Holder resolve(HolderRoute route, Settings settings, Connection app) throws SQLException {
        return placement(route, settings, app, null);
    }

    /**
     * Places the holder of {@code route} with {@code first}, a connection borrowed for that before the
     * application's own: a holder that must share the application's pool keeps it as its first connection
     * (taken while no thread of ours keeps one of the pool's), and then true is returned; otherwise the caller
     * keeps it (false), also when another thread placed the holder meanwhile.
     */
    public static boolean place(HolderRoute route, Settings settings, Connection first) throws SQLException {
        AtomicBoolean kept = new AtomicBoolean();
        placement(route, settings, first, kept);
        return kept.get();
    }

    private static Holder placement(HolderRoute route, Settings settings, Connection app, AtomicBoolean keep)
            throws SQLException {
        ConcurrentHashMap<String, FutureTask<Holder>> placements = route.placements();
        Settings.HolderUrl holderUrl = settings.holderUrl();
        FutureTask<Holder> task = placements.get(holderUrl.key());
        if (task == null) {
            int sessions = settings.holderSessions();
            long linger = settings.holderLingerMillis();
            boolean byDefault = settings.modeIsDefault();
            FutureTask<Holder> mine = new FutureTask<>(() -> compute(route, holderUrl, sessions, linger, app, keep,
                    byDefault));
            task = placements.putIfAbsent(holderUrl.key(), mine);
            if (task == null) {
                task = mine;
                mine.run();
                if (route.borrowsFromApplicationPool()) {
                    usedBy(mine); // a DataSource counts as a user of its holder until it goes (letGo)
                }
            }
        }
        try {
            return task.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLException("LockHygiene: interrupted while placing the lock holder", "57014", e);
        } catch (ExecutionException e) {
            placements.remove(holderUrl, task); // a refused setting is refused again next time, with the same words
            Throwable cause = e.getCause();
            if (cause instanceof SQLException) {
                throw (SQLException) cause;
            }
            throw new SQLException("LockHygiene could not place the lock holder: " + cause, "08001", cause);
        }
    }

    /** What a JDBC connection runs with: its settings, and the holder it emulates in (null when it emulates nothing). */
    public static final class ForConnection {
        public final Settings settings;
        public final Holder holder;

        private ForConnection(Settings settings, Holder holder) {
            this.settings = settings;
            this.holder = holder;
        }
    }

    /**
     * The settings and holder of the JDBC connection {@code app} of {@code route} (null: unknown, then nothing is
     * emulated): none needed on a session of its own under the default ({@link #withoutHolder}), else the route's
     * holder, placed at the endpoint's first connection, and the settings {@link #forConnection(Settings, Holder)}
     * gives with it.
     *
     * @throws SQLException when an explicit {@code holderUrl} is unusable (said in the message)
     */
    public static ForConnection forConnection(HolderRoute route, Settings asked, Connection app) throws SQLException {
        if (route == null || !io.lockhygiene.internal.policy.LockPolicy.emulates(asked)) {
            return new ForConnection(asked, null);
        }
        Settings own = withoutHolder(route, asked, app);
        if (own != null) {
            return new ForConnection(own, null);
        }
        Holder holder = resolve(route, asked, app);
        Settings settings = forConnection(asked, holder);
        return new ForConnection(settings, io.lockhygiene.internal.policy.LockPolicy.emulates(settings) ? holder : null);
    }

    /**
     * The settings one connection runs with, given the holder placed for it ({@code null}: none could be).
     * As given, except for the default mode: emulate that nobody chose steps back to plain pgjdbc's behaviour,
     * reported (detect, releasing nothing), when its holder could get no session of its own and would have to
     * take one of the application's pooled servers or connections (or when there is no holder at all). A
     * holder on the application's route takes one pooled server per process while the process holds locks,
     * and with as many processes holding locks as the pool has servers the application's own statements wait
     * for a server that never comes: worse than plain pgjdbc, so only a user who chose emulate gets it.
     */
    public static Settings forConnection(Settings settings, Holder holder) {
        if (!settings.modeIsDefault() || !io.lockhygiene.internal.policy.LockPolicy.emulates(settings)
                || !stepsBack(holder)) {
            return settings;
        }
        return settings.toBuilder().mode(Settings.Mode.DETECT, STEPPED_BACK)
                .leakCheck(Settings.LeakCheck.NEVER).build();
    }

    /**
     * The settings of a connection the default mode does not need a holder for, or null when it may: a
     * connection that reaches its backend directly (or through a session pooler {@code poolMode=session} names),
     * with {@code poolMode} not forcing transaction pooling, is a session of its own, where the default's emulate
     * would do exactly what detect does (also for a pool's connections: the default lets threads own locks across
     * borrows only behind a transaction pooler); so no holder is placed (no catalog reads, no probe connection, no
     * holder objects at a service's first connection) and the connection runs as detect, as before emulate was
     * the default. Whether a route is direct is asked once per route ({@code SELECT pg_backend_pid()}, against the
     * pid pgjdbc was announced).
     */
    public static Settings withoutHolder(HolderRoute route, Settings settings, Connection app) throws SQLException {
        if (!settings.modeIsDefault() || settings.poolMode() == Settings.PoolMode.TRANSACTION
                || settings.holderUrl().url() != null) {
            return null;
        }
        boolean own = settings.poolMode() == Settings.PoolMode.SESSION;
        if (!own) {
            Boolean direct = route.direct();
            if (direct == null) {
                direct = ServerProbes.isDirect(app);
                route.direct(direct);
            }
            own = direct;
        }
        // what the route answered is the connection's too: a session of its own (its pooling is never asked again,
        // not even when the leak check sample takes one of its statements)
        return own ? settings.toBuilder().mode(Settings.Mode.DETECT, io.lockhygiene.internal.settings.ModeLine.SESSION_OF_ITS_OWN)
                .poolMode(Settings.PoolMode.SESSION).build() : null;
    }


    /** Where {@link #forConnection} says the default mode stepped back. */
    private static final String STEPPED_BACK = "the default, stepped back: the lock holder has no session of its own";

    private static boolean stepsBack(Holder holder) {
        return holder == null || holder.endpoint().kind() == HolderEndpoint.Kind.APPLICATION_ROUTE;
    }

    /** True once {@code route} has its holder for {@code settings} (a caller may place it first). */
    public static boolean placed(HolderRoute route, Settings settings) {
        FutureTask<Holder> task = route.placements().get(settings.holderUrl().key());
        return task != null && task.isDone();
    }

    /**
     * Waits for a placement of {@code route} that another thread is making, holding nothing meanwhile: true
     * when there is one (done now, or failed: the next {@link #resolve} tries again), false when none is made.
     */
    public static boolean awaitPlacement(HolderRoute route, Settings settings) throws SQLException {
        FutureTask<Holder> task = route.placements().get(settings.holderUrl().key());
        if (task == null) {
            return false;
        }
        try {
            task.get();
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLException("LockHygiene: interrupted while placing the lock holder", "57014", e);
        } catch (ExecutionException e) {
            return false;
        }
    }

    /**
     * A DataSource's route is closed or collected: its holders count it no more (a holder nobody uses closes
     * its idle connections), and a holder that borrowed from its pool is shut down, its connection returned.
     */
    public static void letGo(HolderRoute route) {
        for (FutureTask<Holder> task : route.placements().values()) {
            if (!task.isDone()) {
                continue;
            }
            Holder h;
            try {
                h = task.get();
            } catch (InterruptedException | ExecutionException e) {
                continue;
            }
            h.userClosed();
            if (route.borrowsFromApplicationPool() && h.endpoint().kind() == HolderEndpoint.Kind.APPLICATION_ROUTE) {
                h.shutdown();
            }
        }
        route.placements().clear();
    }

    private static void usedBy(FutureTask<Holder> placed) {
        try {
            placed.get().userOpened();
        } catch (InterruptedException | ExecutionException e) {
            // a failed placement has no holder to count; resolve says why
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Forgets every placement of URL routes (tests start afresh). */
    public static void forgetAll() {
        HolderRoute.URL_PLACEMENTS.clear();
        HolderRoute.URL_DIRECT.clear();
    }

    /**
     * @param keep null when {@code app} is the application's own; else set when the holder keeps it
     */
    private static Holder compute(HolderRoute route, Settings.HolderUrl holderUrl, int sessions, long linger,
                                  Connection app, AtomicBoolean keep, boolean byDefault) throws SQLException {
        if (holderUrl.equals(Settings.HolderUrl.POOLER)) {
            return applicationRoute(route, route.describe(), app, keep, linger);
        }
        ServerProbes.Identity appSide = ServerProbes.identityOf(app);
        boolean appThroughPooler = Pgjdbc.backendPid(app) != appSide.pid;
        if (holderUrl.url() != null) {
            return Holders.of(explicit(route, holderUrl.url(), appSide).withMainSessions(sessions).withLinger(linger));
        }
        if (!appThroughPooler && !route.borrowsFromApplicationPool()) {
            // a direct application: its own route is a session of its own already
            return Holders.of(HolderEndpoint.of(HolderEndpoint.Kind.DIRECT, route.describe() + " (direct)",
                    appSide.identity(), route::openLikeApplication).withMainSessions(sessions).withLinger(linger));
        }
        List<String> tried = new ArrayList<>();
        if (appThroughPooler && appSide.address == null) {
            tried.add("the server's own address is not known (the pooler reaches the server through a Unix socket)");
        } else {
            List<ConnectRecipe> recipes = route.recipes(app);
            if (recipes.isEmpty()) {
                tried.add("nothing tells how the application connects (its URL and credentials are not known here)");
            }
            for (ConnectRecipe recipe : recipes) {
                String url = appThroughPooler ? ServerProbes.directUrl(recipe.url(), appSide) : recipe.url();
                HolderRoute.UrlOpener opener = route.urlOpener();
                try {
                    ServerProbes.Identity holderSide = ServerProbes.probe(opener, url,
                            ServerProbes.holderProperties(recipe.properties(), true));
                    if (holderSide.identity().equals(appSide.identity())) {
                        String said = EmulateMessages.holderOnServer(route.describe(), holderSide.address,
                                holderSide.port, recipe.source(), appThroughPooler);
                        Properties props = ServerProbes.holderProperties(recipe.properties(), false);
                        return Holders.of(HolderEndpoint.of(HolderEndpoint.Kind.DIRECT, Urls.redact(url)
                                + " (auto)", appSide.identity(), () -> opener.open(url, props)).withMainSessions(sessions).withLinger(linger),
                                () -> Log.info("{}", said)); // once per holder: a DataSource per tenant says it once
                    }
                    tried.add(recipe.source() + ": " + Urls.redact(url) + " answers for another database ("
                            + holderSide.identity() + ", the application's is " + appSide.identity() + ")");
                } catch (SQLException | RuntimeException e) {
                    tried.add(recipe.source() + ": " + Urls.redact(url) + " did not accept the holder's"
                            + " connection (" + e.getMessage() + ")");
                }
            }
        }
        String why = String.join("; ", tried);
        if (byDefault) {
            // nobody chose emulate: a holder on the application's route could stop the application (see
            // stepsBack), so the default steps back and keeps nothing of the pool's
            Log.warn("{}", EmulateMessages.defaultStepsBack(route.describe(), why));
            return applicationRoute(route, appSide.identity(), app, null, linger);
        }
        if (route.borrowsFromApplicationPool()) {
            Log.warn("{}", EmulateMessages.holderSharesPool(route.describe(), why));
        } else {
            Log.warn("{}", EmulateMessages.holderThroughPooler(route.describe(), why));
        }
        return applicationRoute(route, appSide.identity(), app, keep, linger);
    }

    /**
     * The application's own route. A holder that borrows from the application's pool is the DataSource's own
     * (its placement holds it, so it goes with the DataSource) and keeps the connection borrowed for the
     * placement as its first one, taken before any of the application's own borrows.
     */
    private static Holder applicationRoute(HolderRoute route, Object identity, Connection app, AtomicBoolean keep,
                                           long linger) {
        String description = route.describe() + (route.borrowsFromApplicationPool()
                ? " (borrowed from the application's pool)" : " (through the pooler)");
        if (!route.borrowsFromApplicationPool()) {
            return Holders.of(HolderEndpoint.of(HolderEndpoint.Kind.APPLICATION_ROUTE, description,
                    Arrays.asList(identity, route.describe()), route::openLikeApplication).withLinger(linger));
        }
        java.util.concurrent.atomic.AtomicReference<Connection> first = new java.util.concurrent.atomic.AtomicReference<>();
        if (keep != null) {
            first.set(app);
            keep.set(true);
        }
        String shown = route.describe();
        return Holders.own(HolderEndpoint.of(HolderEndpoint.Kind.APPLICATION_ROUTE, description, identity, () -> {
            Connection c = first.getAndSet(null);
            if (c != null && !c.isClosed()) {
                return c;
            }
            try {
                return route.openLikeApplication();
            } catch (SQLException e) {
                throw new SQLException(EmulateMessages.holderCannotBorrow(shown, e.getMessage()), "08001", e);
            }
        }).withLinger(linger));
    }

    /** How long placing a holder on an explicit endpoint may wait for that endpoint's servers, in all. */
    static final long PLACEMENT_WAIT_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(30);

    /**
     * The explicit endpoint, probed; when the probe finds the endpoint's pool taken (it needs two connections at
     * once), it lets go of its first connection and tries again after a short random pause, within
     * {@link #PLACEMENT_WAIT_NANOS}: holders that each kept one connection and waited for a second would
     * otherwise take a small session-mode entry's every server and wait for each other until the pooler's bound.
     */
    private static HolderEndpoint explicit(HolderRoute route, String url, ServerProbes.Identity appSide)
            throws SQLException {
        long deadline = System.nanoTime() + PLACEMENT_WAIT_NANOS;
        for (int attempt = 1; ; attempt++) {
            try {
                return explicitOnce(route, url, appSide);
            } catch (ServerProbes.PoolBusy busy) {
                if (System.nanoTime() - deadline > 0) {
                    throw busy;
                }
                try {
                    Thread.sleep(50 + java.util.concurrent.ThreadLocalRandom.current().nextInt(250) * Math.min(attempt, 4));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw busy;
                }
            }
        }
    }

    private static HolderEndpoint explicitOnce(HolderRoute route, String url, ServerProbes.Identity appSide)
            throws SQLException {
        String shown = Urls.redact(url);
        Properties props = ServerProbes.holderProperties(credentialsFor(url, route), false);
        Properties probeProps = new Properties();
        probeProps.putAll(props);
        probeProps.setProperty("ApplicationName", ServerProbes.PROBE_APPLICATION_NAME);
        HolderRoute.UrlOpener opener = route.urlOpener();
        Connection first;
        try {
            first = opener.open(url, probeProps);
        } catch (SQLException e) {
            if (HolderEndpoint.poolFull(e)) {
                throw new SQLException(EmulateMessages.holderPoolFull(shown, e.getMessage()), "53300", e);
            }
            throw new SQLException(EmulateMessages.holderUrlUnreachable(shown, e.getMessage()), "08001", e);
        }
        if (first == null) {
            throw new SQLException(EmulateMessages.holderUrlNoDriver(shown), "HY024");
        }
        try {
            ServerProbes.Identity holderSide = ServerProbes.identityOf(first);
            if (!holderSide.identity().equals(appSide.identity())) {
                throw new SQLException(EmulateMessages.holderUrlOtherDatabase(shown, holderSide.identity(),
                        appSide.identity()), "HY024");
            }
            boolean pooler = Pgjdbc.backendPid(first) != holderSide.pid;
            if (pooler && ServerProbes.transactionPooling(opener, url, probeProps, first)) {
                throw new SQLException(EmulateMessages.holderUrlTransactionPooler(shown), "HY024");
            }
            return HolderEndpoint.of(pooler ? HolderEndpoint.Kind.SESSION_POOLER : HolderEndpoint.Kind.DIRECT, shown,
                    appSide.identity(), () -> opener.open(url, props));
        } finally {
            try {
                first.close();
            } catch (SQLException | RuntimeException ignored) {
                // a probe connection
            }
        }
    }

    /** The user and password named in the URL win; otherwise the application's own (its first recipe's). */
    private static Properties credentialsFor(String url, HolderRoute route) {
        Properties p = new Properties();
        boolean urlHasUser = url.matches("(?i).*[?&]user=.*");
        List<ConnectRecipe> recipes = route.recipes(null);
        if (!urlHasUser && !recipes.isEmpty()) {
            p.putAll(HolderRoute.credentials(recipes.get(0).properties()));
        }
        return p;
    }
}
