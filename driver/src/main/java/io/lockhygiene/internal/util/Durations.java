package io.lockhygiene.internal.util;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * LockHygiene's one duration syntax, for settings and the command line alike: {@code 0}, {@code 500ms},
 * {@code 30s}, {@code 5m}; a bare number is milliseconds (as JDBC's own timeouts in ms are).
 */
public final class Durations {
    private static final Pattern DURATION = Pattern.compile("\\s*(\\d{1,12})\\s*(ms|s|m)?\\s*");
    public static final String SYNTAX = "a duration such as 0, 500ms, 30s or 5m (a bare number is milliseconds)";

    private Durations() {
    }

    /** Milliseconds, or IllegalArgumentException naming the syntax. */
    public static long parseMillis(String text) {
        Matcher m = DURATION.matcher(text == null ? "" : text.toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException("not " + SYNTAX + ": '" + text + "'");
        }
        long n = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "ms" : m.group(2);
        return "m".equals(unit) ? n * 60_000 : "s".equals(unit) ? n * 1_000 : n;
    }
}
