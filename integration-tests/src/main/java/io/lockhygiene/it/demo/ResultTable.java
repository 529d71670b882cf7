package io.lockhygiene.it.demo;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/** The demo's table: one row per (route, client), so each LockHygiene mode adds rows, not columns. */
public final class ResultTable {
    private static final String[] HEADERS = {"route", "client", "runs", "overlapping runs", "skipped tries",
            "failed unlocks", "errors", "locks left held", "wall ms", "verdict"};
    private final List<String[]> rows = new ArrayList<>();
    private final List<String> errors = new ArrayList<>();

    /** In words, what the counts mean for the code the workers run. */
    static String verdict(WorkersScenario.Result r) {
        if (r.errors() > 0 && r.runs() == 0) {
            return "refused: the code must change";
        }
        List<String> bad = new ArrayList<>();
        if (r.overlappingRuns() > 0) {
            bad.add("jobs ran twice");
        }
        if (r.failedUnlocks() > 0) {
            bad.add("unlocks missed their lock");
        }
        if (r.locksLeftHeld() > 0) {
            bad.add("a lock stayed held");
        }
        if (r.errors() > 0) {
            bad.add(r.errors() + " errors");
        }
        return bad.isEmpty() ? "exclusive, nothing left" : String.join(", ", bad);
    }

    /** The first error of each row that had one, for the log. */
    public List<String> errors() {
        return errors;
    }

    public void add(String route, String client, WorkersScenario.Result r) {
        rows.add(new String[] {route, client, Integer.toString(r.runs()), Integer.toString(r.overlappingRuns()),
                Integer.toString(r.skippedTries()), Integer.toString(r.failedUnlocks()), Integer.toString(r.errors()),
                Integer.toString(r.locksLeftHeld()), Long.toString(r.wallMillis()), verdict(r)});
        if (r.firstError() != null) {
            errors.add(route + " / " + client + ": first error: " + r.firstError());
        }
    }

    public void print(PrintStream out) {
        int[] width = new int[HEADERS.length];
        for (int i = 0; i < HEADERS.length; i++) {
            width[i] = HEADERS[i].length();
            for (String[] row : rows) {
                width[i] = Math.max(width[i], row[i].length());
            }
        }
        out.println(line(HEADERS, width));
        StringBuilder rule = new StringBuilder("|");
        for (int w : width) {
            rule.append('-').append("-".repeat(w)).append("-|");
        }
        out.println(rule);
        for (String[] row : rows) {
            out.println(line(row, width));
        }
    }

    private static String line(String[] cells, int[] width) {
        StringBuilder sb = new StringBuilder("|");
        for (int i = 0; i < cells.length; i++) {
            boolean numeric = i >= 2 && i < cells.length - 1;
            String pad = " ".repeat(width[i] - cells[i].length());
            sb.append(' ').append(numeric ? pad + cells[i] : cells[i] + pad).append(" |");
        }
        return sb.toString();
    }
}
