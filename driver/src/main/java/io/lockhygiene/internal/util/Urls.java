package io.lockhygiene.internal.util;

import java.util.Locale;

/** JDBC URLs as we may show them. */
public final class Urls {
    private Urls() {
    }

    /** {@code url} with every {@code ...password=} value replaced by {@code ***} (safe to log). */
    public static String redact(String url) {
        if (url == null) {
            return "null";
        }
        if (!url.toLowerCase(Locale.ROOT).contains("password=")) {
            return url; // no regex, so the agent's start-up line compiles no Pattern
        }
        return url.replaceAll("(?i)((?:^|[?&;])[a-z]*password=)[^&;]*", "$1***");
    }
}
