package io.lockhygiene.agent;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The agent's option string: the driver's keys without the "lockhygiene." prefix, comma-separated
 * ({@code mode=emulate,poolMode=transaction}). The prefixed form is accepted too.
 */
final class AgentOptions {

    private AgentOptions() {
    }

    static Map<String, String> parse(String args) {
        Map<String, String> keys = new LinkedHashMap<>();
        if (args == null || args.trim().isEmpty()) {
            return keys;
        }
        for (String part : args.split(",")) {
            String p = part.trim();
            if (p.isEmpty()) {
                continue;
            }
            int eq = p.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("LockHygiene agent option '" + p + "' is not key=value");
            }
            String key = p.substring(0, eq).trim();
            keys.put(key.startsWith("lockhygiene.") ? key : "lockhygiene." + key, p.substring(eq + 1).trim());
        }
        return keys;
    }
}
