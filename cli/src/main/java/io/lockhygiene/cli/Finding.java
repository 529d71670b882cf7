package io.lockhygiene.cli;

/** One finding of {@code scan}, at the line and column of the call itself (both from 1). */
final class Finding {
    final String file;
    final int line;
    final int column;
    final String rule;
    final String severity;
    final String message;

    Finding(String file, int line, int column, String rule, String severity, String message) {
        this.file = file;
        this.line = line;
        this.column = column;
        this.rule = rule;
        this.severity = severity;
        this.message = message;
    }

    @Override
    public String toString() {
        return file + ":" + line + ":" + column + ": " + severity + ": " + message + " [" + rule + "]";
    }
}
