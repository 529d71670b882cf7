package io.lockhygiene.internal.holder;

import java.sql.SQLException;

import io.lockhygiene.internal.locktable.AdvisoryKey;
import io.lockhygiene.internal.locktable.LockOwner;
import io.lockhygiene.internal.locktable.LockTable;

/**
 * A holder's main sessions ({@code lockhygiene.holderSessions}; one on the application's route, which it
 * pins): which one a key lives on (always the same, so its modes are never split across sessions), and the
 * releases each sends for its own keys.
 */
final class MainSessions {
    private final MainSession[] mains;

    MainSessions(MainLink[] links, LockTable table, HolderLife life, ServerQueue waits, HolderStats stats) {
        mains = new MainSession[links.length];
        for (int i = 0; i < links.length; i++) {
            mains[i] = new MainSession(links[i], table, life, waits, stats);
        }
        life.attach(mains, waits);
    }

    /** The main session {@code key} lives on. */
    MainSession forKey(AdvisoryKey key) {
        return mains.length == 1 ? mains[0] : mains[key.spread(mains.length)];
    }

    /** After releases: server locks nobody needs go, each from its own session, only where there is work. */
    void settle(LockOwner caller) throws SQLException {
        for (MainSession main : mains) {
            if (main.settleDue()) {
                main.settle(caller);
            }
        }
    }

    /**
     * Releases the application asked for (an unlock, the end of a transaction, an owner gone): they are sent,
     * and one that another thread's round trip took with it is answered, before this returns, as PostgreSQL's
     * release is done when its call returns. Surplus is taken under a session's turn, so "nothing due" and
     * then "not busy" means none of the caller's releases is in flight there.
     */
    void settleInFlight(LockOwner owner) throws SQLException {
        for (MainSession main : mains) {
            settleInFlight(main, owner);
        }
    }

    /** The same for one key's release: only its own session can have it in flight. */
    void settleInFlight(AdvisoryKey key, LockOwner owner) throws SQLException {
        MainSession home = forKey(key);
        for (MainSession main : mains) {
            if (main == home) {
                settleInFlight(main, owner);
            } else if (main.settleDue()) {
                main.settle(owner); // a waiting session's release, which any main session sends
            }
        }
    }

    private static void settleInFlight(MainSession main, LockOwner owner) throws SQLException {
        if (main.isOpen() && (main.settleDue() || main.busy())) {
            main.settle(owner);
        }
    }
}
