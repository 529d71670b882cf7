package io.lockhygiene.internal.placement;

import io.lockhygiene.internal.holder.Holder;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.FutureTask;

import io.lockhygiene.internal.settings.ConnectionUrl;
import io.lockhygiene.internal.util.Urls;

/**
 * What an application connection tells emulate about where it came from, so that the process's lock
 * holder can be placed: how to open a connection like the application's ({@link #recipes}), the
 * application's own route for a holder that must share it, and where the placement is remembered. Made by
 * the driver and the agent ({@link #ofUrl}) and by the DataSource wrapper. Credentials stay in the recipes:
 * never logged, never in a message.
 *
 * <p>Nothing a route hands the holder may keep the application's DataSource alive: a holder that opens
 * connections of its own gets only {@link #urlOpener()} and a recipe.
 */
public interface HolderRoute {
    /** The application's endpoint, for messages (no credentials). */
    String describe();

    /**
     * Where this endpoint's holder placements are remembered, per {@code lockhygiene.holderUrl} value: the
     * DataSource wrapper keeps its own (they go with the DataSource); URL routes share one per URL and user.
     */
    ConcurrentHashMap<String, FutureTask<Holder>> placements();

    /**
     * A connection the way the application gets one (the same pooler, or a borrow from its pool), for a
     * holder that shares the application's route.
     */
    Connection openLikeApplication() throws SQLException;

    /** True when {@link #openLikeApplication} borrows from the application's own pool (the DataSource wrapper). */
    boolean borrowsFromApplicationPool();

    /** True when the application's connections are lent to any thread: locks then belong to threads. */
    boolean threadOwners();

    /** Opens raw pgjdbc connections (the application's pgjdbc); keeps nothing of the application alive. */
    UrlOpener urlOpener();

    /**
     * How to open a connection like the application's, best first ({@code first} is one of the application's
     * connections, for what it says of itself); empty when nothing is known.
     */
    List<ConnectRecipe> recipes(Connection first);

    /**
     * Whether the application's connections reach their backend directly (the announced pid is the backend's), or
     * null until asked ({@link EndpointResolver#withoutHolder}); kept with the route, as its placements are.
     */
    Boolean direct();

    /** Remembers what {@link #direct()} answers from now on. */
    void direct(boolean direct);

    /** What URL routes know of being direct: per redacted URL and user, as their placements. */
    ConcurrentHashMap<String, Boolean> URL_DIRECT = new ConcurrentHashMap<>();

    /** Placements of URL routes: per redacted URL and user (a few per process; Strings only). */
    ConcurrentHashMap<String, ConcurrentHashMap<String, FutureTask<Holder>>> URL_PLACEMENTS = new ConcurrentHashMap<>();

    /** A route for a connection opened with {@code url} and {@code info} through {@code opener}. */
    static HolderRoute ofUrl(String url, Properties info, boolean threadOwners, UrlOpener opener) {
        // the endpoint names URL (without credentials) and user: one holder per process and database
        String endpoint = Urls.redact(url) + " (user " + (info == null ? null : info.getProperty("user")) + ")";
        ConnectRecipe recipe = new ConnectRecipe(url, credentials(info), "the application's URL");
        return new HolderRoute() {
            @Override
            public String describe() {
                return endpoint;
            }

            @Override
            public ConcurrentHashMap<String, FutureTask<Holder>> placements() {
                return URL_PLACEMENTS.computeIfAbsent(endpoint, e -> new ConcurrentHashMap<>());
            }

            @Override
            public Boolean direct() {
                return URL_DIRECT.get(endpoint);
            }

            @Override
            public void direct(boolean direct) {
                URL_DIRECT.put(endpoint, direct);
            }

            @Override
            public Connection openLikeApplication() throws SQLException {
                return opener.open(url, info);
            }

            @Override
            public boolean borrowsFromApplicationPool() {
                return false;
            }

            @Override
            public boolean threadOwners() {
                return threadOwners;
            }

            @Override
            public UrlOpener urlOpener() {
                return opener;
            }

            @Override
            public List<ConnectRecipe> recipes(Connection first) {
                return Collections.singletonList(recipe);
            }

            @Override
            public String toString() {
                return endpoint;
            }
        };
    }

    /** The user and password of {@code info} (what a holder connection needs of the application's properties). */
    static Properties credentials(Properties info) {
        Properties p = new Properties();
        if (info != null) {
            for (String k : new String[] {"user", "password"}) {
                if (info.getProperty(k) != null) {
                    p.setProperty(k, info.getProperty(k));
                }
            }
        }
        return p;
    }

    /** Opens a raw pgjdbc connection. */
    @FunctionalInterface
    interface UrlOpener {
        Connection open(String url, Properties props) throws SQLException;
    }
}
