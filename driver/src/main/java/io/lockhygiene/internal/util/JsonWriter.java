package io.lockhygiene.internal.util;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * The one JSON writer of LockHygiene (the event report, the command line's JSON and SARIF): compact
 * output, every string escaped by {@link JsonText}, commas placed by the writer, not by its callers.
 *
 * <pre>{@code new JsonWriter().beginObject().field("line", 4).field("rule", "x").endObject().toString()}</pre>
 */
public final class JsonWriter {
    private final StringBuilder out = new StringBuilder(256);
    /** Per open object or array: true until its first member is written. */
    private final Deque<Boolean> empty = new ArrayDeque<>();
    private boolean afterName;

    public JsonWriter beginObject() {
        beforeValue();
        out.append('{');
        empty.push(true);
        return this;
    }

    public JsonWriter endObject() {
        empty.pop();
        out.append('}');
        return this;
    }

    public JsonWriter beginArray() {
        beforeValue();
        out.append('[');
        empty.push(true);
        return this;
    }

    public JsonWriter endArray() {
        empty.pop();
        out.append(']');
        return this;
    }

    /** A member's name; its value follows. */
    public JsonWriter name(String name) {
        comma();
        out.append(JsonText.quote(name)).append(':');
        afterName = true;
        return this;
    }

    public JsonWriter value(String s) {
        beforeValue();
        out.append(JsonText.quote(s));
        return this;
    }

    public JsonWriter value(long n) {
        beforeValue();
        out.append(n);
        return this;
    }

    public JsonWriter field(String name, String value) {
        return name(name).value(value);
    }

    public JsonWriter field(String name, long value) {
        return name(name).value(value);
    }

    private void beforeValue() {
        if (afterName) {
            afterName = false;
        } else {
            comma();
        }
    }

    private void comma() {
        if (!empty.isEmpty()) {
            if (!empty.pop()) {
                out.append(',');
            }
            empty.push(false);
        }
    }

    @Override
    public String toString() {
        return out.toString();
    }
}
