package io.lockhygiene.maven;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One line of the report file ({@code lockhygiene.report}): a flat JSON object of strings, numbers, booleans
 * and nulls, as the driver writes it. A line that is not one (a JVM killed mid-write) is null, not an error.
 */
final class EventLines {
    private EventLines() {
    }

    /** The fields, or null when the line is not a flat JSON object. Nulls are left out. */
    static Map<String, String> parse(String line) {
        Map<String, String> fields = new LinkedHashMap<>();
        int[] at = {skip(line, 0)};
        if (at[0] >= line.length() || line.charAt(at[0]) != '{') {
            return null;
        }
        at[0] = skip(line, at[0] + 1);
        if (at[0] < line.length() && line.charAt(at[0]) == '}') {
            return fields;
        }
        while (true) {
            String key = string(line, at);
            if (key == null) {
                return null;
            }
            at[0] = skip(line, at[0]);
            if (at[0] >= line.length() || line.charAt(at[0]) != ':') {
                return null;
            }
            at[0] = skip(line, at[0] + 1);
            if (at[0] >= line.length()) {
                return null;
            }
            if (line.charAt(at[0]) == '"') {
                String value = string(line, at);
                if (value == null) {
                    return null;
                }
                fields.put(key, value);
            } else {
                int start = at[0];
                while (at[0] < line.length() && ",} \t".indexOf(line.charAt(at[0])) < 0) {
                    at[0]++;
                }
                String bare = line.substring(start, at[0]);
                if (bare.isEmpty()) {
                    return null;
                }
                if (!bare.equals("null")) {
                    fields.put(key, bare);
                }
            }
            at[0] = skip(line, at[0]);
            if (at[0] >= line.length()) {
                return null;
            }
            char c = line.charAt(at[0]);
            if (c == '}') {
                return fields;
            }
            if (c != ',') {
                return null;
            }
            at[0] = skip(line, at[0] + 1);
        }
    }

    private static int skip(String s, int i) {
        while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
            i++;
        }
        return i;
    }

    /** A JSON string starting at at[0] (which must be its opening quote); at[0] ends after the closing one. */
    private static String string(String s, int[] at) {
        int i = at[0];
        if (i >= s.length() || s.charAt(i) != '"') {
            return null;
        }
        StringBuilder sb = new StringBuilder();
        for (i++; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"') {
                at[0] = i + 1;
                return sb.toString();
            }
            if (c != '\\') {
                sb.append(c);
                continue;
            }
            if (++i >= s.length()) {
                return null;
            }
            char e = s.charAt(i);
            switch (e) {
                case 'n': sb.append('\n'); break;
                case 't': sb.append('\t'); break;
                case 'r': sb.append('\r'); break;
                case 'b': sb.append('\b'); break;
                case 'f': sb.append('\f'); break;
                case 'u':
                    if (i + 4 >= s.length()) {
                        return null;
                    }
                    try {
                        sb.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16));
                    } catch (NumberFormatException bad) {
                        return null;
                    }
                    i += 4;
                    break;
                default: sb.append(e); // \" \\ \/
            }
        }
        return null;
    }
}
