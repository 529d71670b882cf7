package io.lockhygiene.internal.guard;

import io.lockhygiene.internal.sql.ScanResult;

/** A statement text that passed the prefilter, with its scan: what execute() must record. */
final class Flagged {
    final ScanResult scan;
    final String original;

    Flagged(ScanResult scan, String original) {
        this.scan = scan;
        this.original = original;
    }
}
