package io.lockhygiene.internal.leak;

import java.util.ArrayList;
import java.util.List;

import io.lockhygiene.settings.Settings;

/**
 * The last few texts this connection sent, for a leak report whose lock was taken where no SQL showed it:
 * what we know then is what ran just before. References only (a store per statement, nothing copied or
 * cut until a report asks); one thread at a time, as the connection.
 */
public final class RecentStatements {
    public static final int KEPT = 8;
    private final String[] texts = new String[KEPT];
    private int next;

    /** Hot path: one reference store. */
    public void add(String sql) {
        texts[next++ & (KEPT - 1)] = sql;
    }

    /** Oldest first, each cut as {@code logSql} says. */
    public List<String> describe(Settings settings) {
        List<String> out = new ArrayList<>(KEPT);
        for (int k = 0; k < KEPT; k++) {
            String s = texts[(next + k) & (KEPT - 1)];
            if (s != null) {
                out.add(settings.loggable(s));
            }
        }
        return out;
    }
}
