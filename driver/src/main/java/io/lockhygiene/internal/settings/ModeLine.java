package io.lockhygiene.internal.settings;

import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.lockhygiene.internal.log.Log;
import io.lockhygiene.settings.Settings;

/**
 * The start-up line: which mode is in force, why (the default, or where it was chosen) and what it does, said
 * at INFO once per JVM for each mode and reason, at the first connection that runs with it. A user who reads
 * the log after an incident must not have to guess whether LockHygiene changed what the SQL means.
 */
public final class ModeLine {
    private static final Set<String> SAID = ConcurrentHashMap.newKeySet();

    /**
     * The source of the settings of a connection the default needs no holder for: a session of its own, where
     * emulate and detect do the same (set by the placement, said here).
     */
    public static final String SESSION_OF_ITS_OWN = "the default; this connection is a session of its own (direct, or"
            + " session pooling), where emulate and detect are the same";

    private ModeLine() {
    }

    /** Says the line for {@code settings} unless this JVM said it already (a set lookup after the first). */
    public static void sayOnce(Settings settings, String frontEnd) {
        String key = settings.mode() + "|" + settings.modeSource();
        if (!SAID.contains(key) && SAID.add(key)) {
            Log.info("{}", line(settings, frontEnd));
        }
    }

    /** The sentence, for tests and the demo. */
    public static String line(Settings settings, String frontEnd) {
        if (SESSION_OF_ITS_OWN.equals(settings.modeSource())) {
            return "LockHygiene (" + frontEnd + "): lockhygiene.mode=emulate (the default). This connection reaches"
                    + " PostgreSQL directly or through a session pooler: it is a session of its own, so nothing is"
                    + " emulated and session locks behave as with pgjdbc (one still held when its connection closes or"
                    + " a pool takes it back is released and reported). Behind a transaction pooler the lock holder"
                    + " would hold them. lockhygiene.mode=detect restores the earlier default (reports only).";
        }
        String mode = settings.mode().name().toLowerCase(Locale.ROOT);
        StringBuilder b = new StringBuilder("LockHygiene (").append(frontEnd).append("): lockhygiene.mode=")
                .append(mode).append(" (").append(settings.modeSource()).append("). ");
        switch (settings.mode()) {
            case EMULATE:
                b.append("Through a transaction pooler, session advisory locks are held by this process's lock"
                        + " holder, with PostgreSQL's own semantics (a lock lasts until its unlock or its session's"
                        + " end).");
                break;
            case DETECT:
                b.append("Through a transaction pooler, session advisory locks are reported");
                b.append(settings.leakCheck() == Settings.LeakCheck.NEVER ? ", and nothing is released."
                        : ", and a session lock still held when its transaction ends is released (so a lock taken in"
                        + " autocommit ends with its statement).");
                break;
            case REWRITE:
                b.append("Through a transaction pooler, session advisory calls inside transactions become their"
                        + " transaction-level forms; the others are reported.");
                break;
            case STRICT:
                b.append("Through a transaction pooler, session advisory locks are refused (SQLState 0A000).");
                break;
            default:
                b.append("Nothing is checked: connections are pgjdbc's own.");
                break;
        }
        b.append(" Direct connections and session pooling run as with pgjdbc.");
        if (settings.modeIsDefault()) {
            b.append(" lockhygiene.mode=detect restores the earlier default (reports only).");
        }
        return b.toString();
    }
}
