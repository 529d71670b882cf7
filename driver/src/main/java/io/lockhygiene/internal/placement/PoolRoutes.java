package io.lockhygiene.internal.placement;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.FutureTask;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;

import io.lockhygiene.internal.holder.Holder;

/**
 * The routes of one {@code LockHygieneDataSource}: getConnection() and one per user of getConnection(user,
 * password), each with its holder placements; and its clean-up when the wrapper is closed or collected
 * (run by its Cleaner). They reference the wrapped pool, never the wrapper, so that the wrapper can be
 * collected.
 */
public final class PoolRoutes implements Runnable {
    private final DataSource delegate;
    private final AtomicReference<ConnectRecipe> told;
    private final HolderRoute.UrlOpener opener;
    private final PoolRoute plain;
    private final ConcurrentHashMap<String, PoolRoute> byUser = new ConcurrentHashMap<>();

    public PoolRoutes(DataSource delegate, AtomicReference<ConnectRecipe> told, HolderRoute.UrlOpener opener) {
        this.delegate = delegate;
        this.told = told;
        this.opener = opener;
        this.plain = new PoolRoute(delegate, told, null, null, opener);
    }

    /** The route of getConnection() (both null) or of getConnection(user, password). */
    public PoolRoute of(String user, String password) {
        if (user == null && password == null) {
            return plain;
        }
        String key = user + "\u0000" + password;
        return byUser.computeIfAbsent(key, k -> new PoolRoute(delegate, told, user, password, opener));
    }

    /** The wrapper is closed or collected: each route's holder lets it go. */
    @Override
    public void run() {
        List<PoolRoute> all = new ArrayList<>(byUser.values());
        all.add(plain);
        for (PoolRoute r : all) {
            EndpointResolver.letGo(r);
        }
    }

    /** One route of the wrapper: its pool, the user it borrows as, and its holder placements. */
    public static final class PoolRoute implements HolderRoute {
        private final UrlOpener opener;
        private final DataSource delegate;
        private final AtomicReference<ConnectRecipe> told;
        private final String user;
        private final String password;
        private final ConcurrentHashMap<String, FutureTask<Holder>> placements = new ConcurrentHashMap<>();
        /** The pool lends the driver's own connections (a jdbc:lockhygiene: URL): nothing to place here. */
        private volatile boolean poolIsOurs;
        /** Whether the pool's connections reach their backend directly; null until asked. */
        private volatile Boolean direct;

        PoolRoute(DataSource delegate, AtomicReference<ConnectRecipe> told, String user, String password,
                  UrlOpener opener) {
            this.opener = opener;
            this.delegate = delegate;
            this.told = told;
            this.user = user;
            this.password = password;
        }

        @Override
        public Boolean direct() {
            return direct;
        }

        @Override
        public void direct(boolean direct) {
            this.direct = direct;
        }

        /** Asked when said (a pool names itself once it has started). */
        @Override
        public String describe() {
            return "LockHygieneDataSource[" + delegate + "]" + (user == null ? "" : " (user " + user + ")");
        }

        @Override
        public ConcurrentHashMap<String, FutureTask<Holder>> placements() {
            return placements;
        }

        @Override
        public Connection openLikeApplication() throws SQLException {
            return user == null && password == null ? delegate.getConnection() : delegate.getConnection(user, password);
        }

        @Override
        public boolean borrowsFromApplicationPool() {
            return true;
        }

        @Override
        public boolean threadOwners() {
            return true;
        }

        @Override
        public UrlOpener urlOpener() {
            return opener;
        }

        /** True once the pool was seen to lend the driver's own connections. */
        public boolean poolIsOurs() {
            return poolIsOurs;
        }

        public void poolIsOurs(boolean ours) {
            poolIsOurs = ours;
        }

        @Override
        public List<ConnectRecipe> recipes(Connection first) {
            List<ConnectRecipe> learned = new ArrayList<>(3);
            ConnectRecipe t = told.get();
            if (t != null) {
                learned.add(t);
            }
            learned.addAll(PoolConfig.of(delegate));
            ConnectRecipe own = first == null ? null : PoolConfig.ofConnection(first);
            if (own != null) {
                learned.add(own);
            }
            if (user == null && password == null) {
                return learned;
            }
            // getConnection(user, password): the pool's address, this user's credentials
            List<ConnectRecipe> asUser = new ArrayList<>(learned.size());
            for (ConnectRecipe r : learned) {
                Properties p = r.properties();
                p.remove("user");
                p.remove("password");
                if (user != null) {
                    p.setProperty("user", user);
                }
                if (password != null) {
                    p.setProperty("password", password);
                }
                asUser.add(new ConnectRecipe(r.url(), p, r.source() + " with getConnection's user and password"));
            }
            return asUser;
        }

        @Override
        public String toString() {
            return describe();
        }
    }
}
