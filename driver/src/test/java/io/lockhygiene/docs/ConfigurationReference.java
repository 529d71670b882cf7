package io.lockhygiene.docs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import io.lockhygiene.settings.LockHygieneProperty;

/**
 * Writes the generated part of {@code docs/configuration.md} from the {@link LockHygieneProperty} enum: every key, its
 * environment variable, its default, its allowed values and its description. {@code bin/config-reference}
 * runs it; {@link DocsTest} fails the build when the page and the enum differ.
 */
public final class ConfigurationReference {
    static final String BEGIN = "<!-- generated from io.lockhygiene.settings.LockHygieneProperty by bin/config-reference: do not edit -->";
    static final String END = "<!-- end of generated reference -->";

    private ConfigurationReference() {
    }

    /** The generated table, markers included. */
    public static String render() {
        StringBuilder b = new StringBuilder(BEGIN).append('\n');
        b.append("| key | environment | default | values | what it does |\n|---|---|---|---|---|\n");
        for (LockHygieneProperty s : LockHygieneProperty.values()) {
            b.append("| `").append(s.key()).append("` | `").append(s.envName()).append("` | `")
                    .append(s.defaultValue().isEmpty() ? "(none)" : s.defaultValue()).append("` | ");
            String[] values = s.allowedValues();
            for (int i = 0; i < values.length; i++) {
                b.append(i == 0 ? "" : ", ").append('`').append(values[i].replace("|", "\\|")).append('`');
            }
            b.append(" | ").append(s.isJvmWide() ? "JVM-wide (not per connection). " : "")
                    .append(s.description().replace("|", "\\|")).append(" |\n");
        }
        return b.append(END).toString();
    }

    /** The page with its generated part replaced by {@link #render()}. */
    static String merged(String page) {
        int from = page.indexOf(BEGIN);
        int to = page.indexOf(END);
        if (from < 0 || to < from) {
            throw new IllegalStateException("docs/configuration.md lost its markers (" + BEGIN + " ... " + END + ")");
        }
        return page.substring(0, from) + render() + page.substring(to + END.length());
    }

    /** {@code args[0]}: the repository's root (default: the parent of the working directory, the driver module). */
    public static void main(String[] args) throws IOException {
        Path root = Paths.get(args.length > 0 ? args[0] : "..");
        Path page = root.resolve("docs/configuration.md");
        String old = Files.readString(page, StandardCharsets.UTF_8);
        String now = merged(old);
        if (!now.equals(old)) {
            Files.writeString(page, now, StandardCharsets.UTF_8);
        }
        System.out.println(now.equals(old) ? "docs/configuration.md is current" : "docs/configuration.md rewritten");
    }
}
