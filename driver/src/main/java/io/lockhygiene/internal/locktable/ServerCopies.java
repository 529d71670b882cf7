package io.lockhygiene.internal.locktable;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The modes the holder's backends hold on the server, per key (in {@link KeyState}) and counted per
 * backend, and the stray second copies a race left: what is surplus once no owner needs a mode. Not
 * thread-safe: {@link LockTable} uses it under its lock.
 */
final class ServerCopies {
    private final Holdings holdings;
    private final Map<LockTable.Backend, Integer> modesOn = new HashMap<>();
    /** Server modes taken that the table already had on another backend: released with the surplus. */
    private final List<ServerLock> strays = new ArrayList<>(0);
    private int serverModes;

    ServerCopies(Holdings holdings) {
        this.holdings = holdings;
    }

    /** Backend {@code on} took the mode: the key's copy, or a stray when the key has one already. */
    void took(AdvisoryKey key, KeyState k, boolean shared, LockTable.Backend on, int seal) {
        if (k.server(shared) == null) {
            k.setServer(shared, on, seal);
            serverModes++;
        } else {
            strays.add(new ServerLock(key, shared, on)); // a second copy: it goes with the surplus
        }
        modesOn.merge(on, 1, Integer::sum);
        holdings.touched.add(key);
    }

    /**
     * The copies no owner needs (and the strays) that live on backends {@code mine} accepts, marked released;
     * keys nobody uses are forgotten. Keys whose surplus lives elsewhere stay touched for their backend's turn.
     */
    List<ServerLock> surplus(Predicate<LockTable.Backend> mine) {
        List<ServerLock> out = new ArrayList<>();
        for (Iterator<ServerLock> it = strays.iterator(); it.hasNext(); ) {
            ServerLock stray = it.next();
            if (mine.test(stray.on)) {
                out.add(stray);
                forgetOne(stray.on);
                it.remove();
            }
        }
        for (Iterator<AdvisoryKey> it = holdings.touched.iterator(); it.hasNext(); ) {
            AdvisoryKey key = it.next();
            KeyState k = holdings.keys.get(key);
            if (k == null) {
                it.remove();
                continue;
            }
            boolean elsewhere = false;
            for (boolean shared : new boolean[] {false, true}) {
                if (k.surplus(shared)) {
                    if (!mine.test(k.server(shared))) {
                        elsewhere = true;
                        continue;
                    }
                    out.add(new ServerLock(key, shared, k.server(shared)));
                    forgetOne(k.server(shared));
                    serverModes--;
                    k.setServer(shared, null, 0);
                }
            }
            if (elsewhere) {
                continue;
            }
            if (k.unused()) {
                holdings.keys.remove(key);
            }
            it.remove();
        }
        return out;
    }

    boolean surplusDue(Predicate<LockTable.Backend> mine) {
        for (ServerLock stray : strays) {
            if (mine.test(stray.on)) {
                return true;
            }
        }
        for (AdvisoryKey key : holdings.touched) {
            KeyState k = holdings.keys.get(key);
            if (k != null && ((k.surplus(false) && mine.test(k.server(false)))
                    || (k.surplus(true) && mine.test(k.server(true))))) {
                return true;
            }
        }
        return false;
    }

    boolean holdNothing() {
        return serverModes == 0 && strays.isEmpty();
    }

    boolean onBackend(LockTable.Backend on) {
        return modesOn.containsKey(on);
    }

    void clear() {
        modesOn.clear();
        strays.clear();
        serverModes = 0;
    }

    private void forgetOne(LockTable.Backend on) {
        modesOn.computeIfPresent(on, (b, n) -> n == 1 ? null : n - 1);
    }
}
