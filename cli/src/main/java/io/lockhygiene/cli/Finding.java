package io.lockhygiene.cli;

/**
 * One finding of the static scan, at the line and column of the call itself (both from 1). Public for the
 * Maven plugin, which runs the same scan.
 */
public final class Finding {
    final String file;
    final int line;
    final int column;
    final String rule;
    final String severity;
    final String message;
    final String lineText;

    Finding(String file, int line, int column, String rule, String severity, String message, String lineText) {
        this.file = file;
        this.line = line;
        this.column = column;
        this.rule = rule;
        this.severity = severity;
        this.message = message;
        this.lineText = lineText;
    }

    public String file() {
        return file;
    }

    public int line() {
        return line;
    }

    public int column() {
        return column;
    }

    public String rule() {
        return rule;
    }

    /** {@code warning} (a session lock taken) or {@code note} (an unlock, SKIP LOCKED that may pin one row). */
    public String severity() {
        return severity;
    }

    public String message() {
        return message;
    }

    /**
     * What a baseline remembers: rule, file and the finding's line with its indentation and repeated spaces
     * folded, but not the line number, so an accepted finding stays accepted when code above it moves.
     */
    public String fingerprint() {
        return rule + "\t" + file.replace('\\', '/') + "\t" + lineText.trim().replaceAll("\\s+", " ");
    }

    @Override
    public String toString() {
        return file + ":" + line + ":" + column + ": " + severity + ": " + message + " [" + rule + "]";
    }
}
