package io.lockhygiene.bench.path;

import java.lang.instrument.Instrumentation;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import net.bytebuddy.agent.ByteBuddyAgent;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.matcher.ElementMatchers;

/**
 * Which of the driver's classes and source files one {@code Statement.execute} under emulate runs through: every
 * method and constructor of {@code io.lockhygiene} (but this tool and the test bed) records its class while one
 * execution is traced. Runs against whichever driver is on the class path, so two commits compare
 * ({@code bin/statement-path}, optionally with another build's driver jar).
 *
 * <p>Traced, through the bed's transaction pooler with {@code lockhygiene.mode=emulate}, after one warm-up round
 * (the holder connected, the texts read once): {@code SELECT pg_advisory_lock(k)}, {@code SELECT 1} while the
 * lock is held (an owner's fenced statement), and {@code SELECT pg_advisory_unlock(k)}.
 */
public final class StatementPath {
    private StatementPath() {
    }

    public static void main(String[] args) throws Exception {
        Instrumentation inst = ByteBuddyAgent.install();
        new AgentBuilder.Default()
                .disableClassFormatChanges()
                .with(AgentBuilder.RedefinitionStrategy.RETRANSFORMATION)
                .ignore(ElementMatchers.nameStartsWith("net.bytebuddy."))
                .type(ElementMatchers.nameStartsWith("io.lockhygiene.")
                        .and(ElementMatchers.not(ElementMatchers.nameStartsWith("io.lockhygiene.bench.")))
                        .and(ElementMatchers.not(ElementMatchers.nameStartsWith("io.lockhygiene.it."))))
                .transform((builder, type, loader, module, domain) -> builder.visit(Advice.to(Entered.class)
                        .on(ElementMatchers.isMethod().or(ElementMatchers.isConstructor())
                                .and(ElementMatchers.not(ElementMatchers.isAbstract())))))
                .installOn(inst);
        try (TestBed bed = TestBed.start()) {
            // the driver found by its class (not DriverManager's caller check), whichever build it is
            Driver driver = (Driver) Class.forName("io.lockhygiene.LockHygieneDriver").getDeclaredConstructor().newInstance();
            Properties props = new Properties();
            props.setProperty("user", bed.endpoints().user());
            props.setProperty("password", bed.endpoints().password());
            String url = bed.lockHygieneUrl(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
            long k = 990_001;
            try (Connection c = driver.connect(url, props); Statement s = c.createStatement()) {
                String lock = "SELECT pg_advisory_lock(" + k + ")";
                String unlock = "SELECT pg_advisory_unlock(" + k + ")";
                for (int i = 0; i < 2; i++) { // warm-up: the holder connected, classes loaded, texts read
                    s.execute(lock);
                    s.execute("SELECT 1");
                    s.execute(unlock);
                }
                report("execute(\"" + lock + "\")", () -> s.execute(lock));
                report("execute(\"SELECT 1\") of an owner holding the lock", () -> s.execute("SELECT 1"));
                report("execute(\"" + unlock + "\")", () -> s.execute(unlock));
            }
        }
    }

    @FunctionalInterface
    private interface Execution {
        void run() throws Exception;
    }

    private static void report(String what, Execution e) throws Exception {
        Entered.start(Thread.currentThread());
        try {
            e.run();
        } finally {
            Entered.stop();
        }
        List<String> classes = new ArrayList<>(Entered.classes());
        Set<String> files = new LinkedHashSet<>();
        Set<String> handWritten = new LinkedHashSet<>();
        for (String c : classes) {
            String outer = c.contains("$") ? c.substring(0, c.indexOf('$')) : c;
            files.add(outer);
            // the forwarding processor's classes (Generated*) are generated at build time, not hand-written
            if (!outer.substring(outer.lastIndexOf('.') + 1).startsWith("Generated")) {
                handWritten.add(outer);
            }
        }
        System.out.printf("%n%s: %d classes, %d source files (%d hand-written)%n", what, classes.size(), files.size(),
                handWritten.size());
        for (String f : files) {
            System.out.println("  " + f.replace("io.lockhygiene.", "") + (handWritten.contains(f) ? "" : " (generated)"));
        }
    }

    /** The advice: records the class of every method entered on the traced thread. */
    public static final class Entered {
        // public: the advice's code is copied into the traced classes, which read these
        public static volatile Thread traced;
        public static final Set<String> SEEN = java.util.Collections.synchronizedSet(new LinkedHashSet<>());

        private Entered() {
        }

        @Advice.OnMethodEnter
        public static void enter(@Advice.Origin("#t") String type) {
            if (Thread.currentThread() == traced) {
                SEEN.add(type);
            }
        }

        static void start(Thread t) {
            SEEN.clear();
            traced = t;
        }

        static void stop() {
            traced = null;
        }

        static List<String> classes() {
            synchronized (SEEN) {
                return new ArrayList<>(SEEN);
            }
        }
    }
}
