package io.lockhygiene.bench;

import java.util.LinkedHashMap;
import java.util.Map;

/** What one benchmark run writes: BENCHMARKS.md-ready tables and the figures by name. */
final class Report {
    static final StringBuilder MD = new StringBuilder();
    static final Map<String, Object> JSON = new LinkedHashMap<>();


    static String json(Map<String, Object> m) {
        StringBuilder sb = new StringBuilder("{\n");
        int i = 0;
        for (Map.Entry<String, Object> e : m.entrySet()) {
            sb.append("  \"").append(e.getKey().replace("\"", "'")).append("\": ").append(e.getValue())
                    .append(++i < m.size() ? ",\n" : "\n");
        }
        return sb.append("}\n").toString();
    }

    private Report() {
    }
}
