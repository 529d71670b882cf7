package io.lockhygiene.r2dbc.internal;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import io.lockhygiene.internal.holder.Holder;
import io.lockhygiene.internal.log.Log;
import io.lockhygiene.internal.policy.LockPolicy;
import io.lockhygiene.internal.session.SkipLockedCheck;
import io.lockhygiene.internal.settings.SettingsReader;
import io.lockhygiene.internal.log.EmulateMessages;
import io.lockhygiene.internal.placement.EndpointResolver;
import io.lockhygiene.internal.settings.ModeLine;
import io.lockhygiene.settings.Settings;
import io.r2dbc.proxy.ProxyConnectionFactory;
import io.r2dbc.proxy.listener.ProxyExecutionListener;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryOptions;
import io.r2dbc.spi.Wrapped;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

/**
 * What one guarded ConnectionFactory keeps: its settings (read once), the factory its connections come from
 * (r2dbc-proxy's over the application's when the application gave r2dbc-proxy listeners, which then see every
 * statement, LockHygiene's own included; the application's own otherwise), and, under emulate, where its lock
 * holder goes. Each connection it makes gets a guard of its own. Public only for {@code io.lockhygiene.r2dbc};
 * not API.
 */
public final class Guarding {
    private final ConnectionFactory proxied;
    private final Settings settings;
    private final HolderSite site;
    private final AtomicBoolean toldNoHolder = new AtomicBoolean();

    /**
     * @throws IllegalArgumentException for a bad setting, or {@code lockhygiene.skipLocked=strict} without JSqlParser
     */
    public Guarding(ConnectionFactory delegate, Map<String, String> keys, Optional<ConnectionFactoryOptions> endpoint,
                    List<ProxyExecutionListener> listeners) {
        this.settings = SettingsReader.readForConnection(keys, System.getProperties(), System::getenv);
        String refusal = SkipLockedCheck.refusal(settings);
        if (refusal != null) {
            throw new IllegalArgumentException("LockHygiene cannot guard this ConnectionFactory: " + refusal);
        }
        if (listeners.isEmpty()) {
            // nobody observes: the driver's own connections, so a statement without advisory calls costs the
            // prefilter and nothing else (r2dbc-proxy's proxies cost about 1 µs and 3.5 KB a statement)
            this.proxied = delegate;
        } else {
            ProxyConnectionFactory.Builder proxy = ProxyConnectionFactory.builder(delegate);
            for (ProxyExecutionListener l : listeners) {
                proxy.listener(l);
            }
            this.proxied = proxy.build();
        }
        this.site = LockPolicy.emulates(settings) && endpoint.isPresent() ? HolderSite.of(endpoint.get(), settings) : null;
    }

    public Publisher<? extends Connection> create() {
        if (LockPolicy.off(settings)) {
            return proxied.create();
        }
        if (site != null) {
            // the route's answer, as the driver's: its settings (a session of its own, stepped back, or as asked)
            // and the holder it emulates in
            return site.placement().flatMap(p -> Mono.from(proxied.create()).map(c -> guarded(c, p.settings, p.holder)));
        }
        if (LockPolicy.emulates(settings) && toldNoHolder.compareAndSet(false, true)) {
            if (settings.modeIsDefault()) {
                Log.warn("{}", EmulateMessages.defaultStepsBack(this, "this R2DBC ConnectionFactory does not say where"
                        + " its server is (use a r2dbc:lockhygiene:postgresql:// URL, or"
                        + " LockHygieneConnectionFactory.builder(...).connectsTo(...))"));
            } else {
                Log.warn("LockHygiene (lockhygiene.mode=emulate): this R2DBC ConnectionFactory does not say where its"
                        + " server is, so no lock holder can be placed and its connections behave as detect. Fix: use a"
                        + " r2dbc:lockhygiene:postgresql:// URL, or LockHygieneConnectionFactory.builder(...).connectsTo(...)"
                        + " (the Spring Boot starter passes spring.r2dbc.url, username and password).");
            }
        }
        // no holder can be placed: the default steps back, emulate chosen by name behaves as detect
        Settings mine = EndpointResolver.forConnection(settings, null);
        return Mono.from(proxied.create()).map(c -> guarded(c, mine, null));
    }

    /** @param holder the holder the connection emulates in, or null */
    private Connection guarded(Connection proxy, Settings mine, Holder holder) {
        @SuppressWarnings("unchecked")
        Connection raw = proxy != null && proxy.getClass().getName().startsWith("jdk.proxy")
                && proxy instanceof Wrapped ? ((Wrapped<Connection>) proxy).unwrap() : proxy;
        ModeLine.sayOnce(mine, "R2DBC");
        return new GuardedConnection(proxy, new R2dbcGuard(raw, proxy, mine, holder));
    }

    @Override
    public String toString() {
        return settings + (site == null ? "" : ", lock holder for " + site);
    }
}
