package io.lockhygiene.internal.leak;

/** Where in the application a statement came from: the first frame outside JDBC plumbing. */
public final class CallSite {
    private static final String[] PLUMBING = {"io.lockhygiene.internal.", "io.lockhygiene.LockHygiene", "java.", "javax.", "jdk.", "sun.",
            "org.postgresql.", "com.zaxxer.hikari.", "org.apache.commons.dbcp2.", "org.apache.tomcat.jdbc.",
            "com.mchange.", "io.agroal.", "org.springframework.jdbc.", "org.flywaydb.core.internal.jdbc."};

    private CallSite() {
    }

    /** A stack captured now; cheap enough for lock calls, which are rare. */
    public static Throwable capture(String what) {
        Throwable t = new Throwable(what);
        StackTraceElement[] frames = t.getStackTrace();
        int ours = 0;
        while (ours < frames.length && frames[ours].getClassName().startsWith("io.lockhygiene.internal.")) {
            ours++;
        }
        if (ours > 0 && ours < frames.length) {
            t.setStackTrace(java.util.Arrays.copyOfRange(frames, ours, frames.length)); // start at the caller
        }
        return t;
    }

    public static String describe(Throwable stack) {
        for (StackTraceElement e : stack.getStackTrace()) {
            String c = e.getClassName();
            boolean plumbing = false;
            for (String p : PLUMBING) {
                if (c.startsWith(p)) {
                    plumbing = true;
                    break;
                }
            }
            if (!plumbing) {
                return e.toString();
            }
        }
        StackTraceElement[] all = stack.getStackTrace();
        return all.length > 0 ? all[all.length - 1].toString() : "unknown";
    }
}
