package io.lockhygiene.internal.settings;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

import io.lockhygiene.settings.LockHygieneProperty;
import io.lockhygiene.internal.util.Urls;

/**
 * Splits a {@code jdbc:lockhygiene:postgresql:...} URL into the pgjdbc URL (only the leading
 * {@code lockhygiene:} and our own query parameters removed, everything else byte for byte) and our
 * keys. Unlike a {@code replace}, a second "lockhygiene:" elsewhere in the URL is left alone.
 */
public final class ConnectionUrl {
    public static final String PREFIX = "jdbc:lockhygiene:";
    public static final String ACCEPTED = PREFIX + "postgresql:";

    private final String targetUrl;
    private final Map<String, String> ourKeys;

    private ConnectionUrl(String targetUrl, Map<String, String> ourKeys) {
        this.targetUrl = targetUrl;
        this.ourKeys = ourKeys;
    }

    public static boolean accepts(String url) {
        return url != null && url.startsWith(ACCEPTED);
    }

    public static ConnectionUrl parse(String url) {
        if (!accepts(url)) {
            throw new IllegalArgumentException("Not a LockHygiene URL (expected " + ACCEPTED + "...): " + Urls.redact(url));
        }
        String target = "jdbc:" + url.substring(PREFIX.length());
        int q = target.indexOf('?');
        if (q < 0) {
            return new ConnectionUrl(target, Collections.emptyMap());
        }
        Map<String, String> ours = new LinkedHashMap<>();
        StringBuilder kept = new StringBuilder(target.length());
        kept.append(target, 0, q);
        char sep = '?';
        for (String pair : target.substring(q + 1).split("&", -1)) {
            int eq = pair.indexOf('=');
            String key = decode(eq < 0 ? pair : pair.substring(0, eq));
            if (key.startsWith(LockHygieneProperty.PREFIX)) {
                ours.put(key, eq < 0 ? "" : decode(pair.substring(eq + 1)));
            } else if (!pair.isEmpty()) {
                kept.append(sep).append(pair);
                sep = '&';
            }
        }
        return new ConnectionUrl(kept.toString(), ours);
    }

    /** The URL handed to pgjdbc. */
    public String targetUrl() {
        return targetUrl;
    }

    /** Our keys from the URL. */
    public Map<String, String> ourKeys() {
        return ourKeys;
    }

    /** Our keys from Properties and the URL (URL wins, as pgjdbc lets URL parameters win). */
    public Map<String, String> ourKeys(Properties info) {
        Map<String, String> merged = new LinkedHashMap<>();
        if (info != null) {
            for (String name : info.stringPropertyNames()) {
                if (name.startsWith(LockHygieneProperty.PREFIX)) {
                    merged.put(name, info.getProperty(name));
                }
            }
        }
        merged.putAll(ourKeys);
        return merged;
    }

    /** A copy of {@code info} without our keys, for pgjdbc. */
    public static Properties withoutOurKeys(Properties info) {
        Properties copy = new Properties();
        if (info != null) {
            for (String name : info.stringPropertyNames()) {
                if (!name.startsWith(LockHygieneProperty.PREFIX)) {
                    copy.setProperty(name, info.getProperty(name));
                }
            }
        }
        return copy;
    }


    private static String decode(String s) {
        try {
            return URLDecoder.decode(s, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return s;
        }
    }
}
