package io.lockhygiene.jdbc;

/** Where in the application a statement came from: the first frame outside JDBC plumbing. */
final class CallSite {
    private static final String[] PLUMBING = {"io.lockhygiene.", "java.", "javax.", "jdk.", "sun.",
            "org.postgresql.", "com.zaxxer.hikari.", "org.apache.commons.dbcp2.", "org.apache.tomcat.jdbc.",
            "com.mchange.", "io.agroal.", "org.springframework.jdbc.", "org.flywaydb.core.internal.jdbc."};

    private CallSite() {
    }

    /** A stack captured now; cheap enough for lock calls, which are rare. */
    static Throwable capture(String what) {
        return new Throwable(what);
    }

    static String describe(Throwable stack) {
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
