package io.lockhygiene.internal.leak;

/** Where in the application a statement came from: the first frame outside JDBC plumbing. */
public final class CallSite {
    private static final String[] PLUMBING = {"io.lockhygiene.internal.", "io.lockhygiene.LockHygiene", "java.", "javax.", "jdk.", "sun.",
            "org.postgresql.", "com.zaxxer.hikari.", "org.apache.commons.dbcp2.", "org.apache.tomcat.jdbc.",
            "com.mchange.", "io.agroal.", "org.springframework.jdbc.", "org.flywaydb.core.internal.jdbc."};

    private CallSite() {
    }

    /**
     * The stack now, as the JVM keeps it: its frames become {@link StackTraceElement}s (the costly part, names
     * interned frame by frame) only when somebody reads them, a report or a log, which most lock calls never
     * have; then they start at the caller, our own frames left out.
     */
    public static Throwable capture(String what) {
        return new Trace(what);
    }

    /** A captured stack whose frames are made and trimmed when first read. */
    private static final class Trace extends Throwable {
        private static final long serialVersionUID = 1L;
        private volatile boolean trimmed;

        Trace(String what) {
            super(what);
        }

        @Override
        public StackTraceElement[] getStackTrace() {
            if (!trimmed) {
                StackTraceElement[] frames = super.getStackTrace();
                int ours = 0;
                while (ours < frames.length && frames[ours].getClassName().startsWith("io.lockhygiene.internal.")) {
                    ours++;
                }
                if (ours > 0 && ours < frames.length) {
                    setStackTrace(java.util.Arrays.copyOfRange(frames, ours, frames.length)); // start at the caller
                }
                trimmed = true;
            }
            return super.getStackTrace();
        }

        @Override
        public void printStackTrace(java.io.PrintStream s) {
            getStackTrace(); // printing reads the frames without this method: trim them first
            super.printStackTrace(s);
        }

        @Override
        public void printStackTrace(java.io.PrintWriter s) {
            getStackTrace();
            super.printStackTrace(s);
        }
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
