package io.lockhygiene.sql;

import java.util.Collections;
import java.util.List;

/** What the scanner found in one SQL text. Immutable once built; safe to cache and share. */
public final class ScanResult {
    /** The verdict for the overwhelming majority of statements: nothing of interest. */
    public static final ScanResult NOTHING = new ScanResult(Collections.emptyList(), false);

    private final List<AdvisoryCall> calls;
    private final boolean skipLocked;
    private final boolean sessionLevel;
    private final boolean sessionAcquire;

    ScanResult(List<AdvisoryCall> calls, boolean skipLocked) {
        this.calls = Collections.unmodifiableList(calls);
        this.skipLocked = skipLocked;
        boolean session = false;
        boolean acquire = false;
        for (AdvisoryCall c : calls) {
            if (c.function().isSessionLevel()) {
                session = true;
                acquire |= c.function().isAcquire();
            }
        }
        this.sessionLevel = session;
        this.sessionAcquire = acquire;
    }

    /** Every advisory function call, in text order, session-level and xact alike. */
    public List<AdvisoryCall> calls() {
        return calls;
    }

    /** True when a session-level function (lock, try, unlock or unlock_all) is called. */
    public boolean hasSessionLevelCall() {
        return sessionLevel;
    }

    /** True when a session-level lock is taken (lock or try, exclusive or shared). */
    public boolean hasSessionAcquire() {
        return sessionAcquire;
    }

    /** True when {@code SKIP LOCKED} appears outside strings and comments. */
    public boolean hasSkipLocked() {
        return skipLocked;
    }

    /** The first session-level call, for messages. */
    public AdvisoryCall firstSessionCall() {
        for (AdvisoryCall c : calls) {
            if (c.function().isSessionLevel()) {
                return c;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return "ScanResult" + calls + (skipLocked ? " SKIP LOCKED" : "");
    }
}
