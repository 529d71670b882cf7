package io.lockhygiene.it.bench;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.stream.Collectors;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;

/**
 * Agent start-up cost, side by side in one run: time from JVM start to a service's first query (the
 * JVM's own uptime at that moment, and the wall time the parent sees), without and with
 * -javaagent:lockhygiene-agent.jar, and with an agent that does nothing (the JVM's own price of any agent),
 * interleaved. A benchmark, not a test: it prints figures.
 * Args: [ROUNDS] (default 21) [minimal|wide]: the service's class path is by default a minimal service's
 * (this module's classes and pgjdbc); {@code wide} gives it this module's 55 or so libraries too (HikariCP and
 * DBCP2 among them, unused: the agent then watches class loading for the whole run). Needs the agent jar
 * built (mvn install).
 */
public final class AgentStartup {
    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 21;
        boolean wide = args.length > 1 && "wide".equals(args[1]);
        Path agent = Paths.get(System.getProperty("testbed.agentJar", "agent/target/lockhygiene-agent.jar")).toAbsolutePath();
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        // The service's class path: this module's classes and its libraries, without any jar of ours (the agent,
        // the CLI and the JUnit extension carry the core too; on the class path they would serve our classes
        // ahead of the agent jar and measure another layout than a service's).
        String cp = classPath().stream().filter(AgentStartup::notOurs).filter(e -> wide || minimalService(e))
                .collect(Collectors.joining(File.pathSeparator));
        Path empty = EmptyAgent.writeJar(Files.createTempDirectory("lockhygiene-empty-agent"));
        String[] arms = {null, empty.toString(), agent.toString()}; // plain, empty agent, ours
        try (TestBed bed = TestBed.start()) {
            // per arm, per measure (uptime, wall, main thread's CPU), one value per round
            List<List<List<Long>>> got = new ArrayList<>();
            for (int arm = 0; arm < arms.length; arm++) {
                got.add(List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>()));
            }
            for (int i = 0; i < rounds + 2; i++) { // two warm-up rounds (file cache) are dropped
                for (int k = 0; k < arms.length; k++) {
                    int arm = (i + k) % arms.length; // the order turns each round: no arm always runs first
                    long[] m = run(java, arms[arm], cp, bed);
                    if (i >= 2) {
                        for (int x = 0; x < m.length; x++) {
                            got.get(arm).get(x).add(m[x]);
                        }
                    }
                }
            }
            System.out.printf("%nAgent start-up, %d rounds, the three arms in turning order, medians (JVM %s, %s class"
                    + " path: %d entries):%n", rounds, System.getProperty("java.version"), wide ? "wide" : "a minimal service's",
                    cp.split(File.pathSeparator).length);
            System.out.printf("| measure | plain pgjdbc | empty agent | with agent | added (paired) | ratio |"
                    + " added over the empty agent (paired) |%n|---|---|---|---|---|---|---|%n");
            String[] names = {"JVM uptime at first query", "wall time to first query", "main thread's CPU time by then"};
            for (int x = 0; x < names.length; x++) {
                row(names[x], got.get(0).get(x), got.get(1).get(x), got.get(2).get(x));
            }
            long added = pairedMedian(got.get(2).get(0), got.get(0).get(0));
            double ratio = (double) median(got.get(2).get(0)) / median(got.get(0).get(0));
            System.out.printf("%nGoal (at most +60 ms and a ratio of at most 1.20, JVM uptime): %s (+%d ms, %.2f)%n",
                    added <= 60 && ratio <= 1.20 ? "met" : "not met", added, ratio);
        }
    }

    /** Medians per arm; "added" is the median of the per-round differences, steadier than a difference of medians. */
    private static void row(String name, List<Long> plain, List<Long> empty, List<Long> agent) {
        System.out.printf("| %s | %d ms | %d ms | %d ms | %d ms | %.2f | %d ms |%n", name, median(plain), median(empty),
                median(agent), pairedMedian(agent, plain), (double) median(agent) / median(plain), pairedMedian(agent, empty));
    }

    private static long pairedMedian(List<Long> a, List<Long> b) {
        List<Long> d = new ArrayList<>();
        for (int i = 0; i < a.size(); i++) {
            d.add(a.get(i) - b.get(i));
        }
        return median(d);
    }

    static boolean notOurs(String entry) {
        String name = Paths.get(entry).getFileName().toString();
        if (name.startsWith("lockhygiene-")) {
            return false;
        }
        String sep = File.separator;
        for (String module : new String[] {"driver", "agent", "cli", "junit", "spring-boot-starter", "maven-plugin", "forwarding-processor"}) {
            if (entry.contains(sep + module + sep + "target")) {
                return false;
            }
        }
        return true;
    }

    /** FirstQuery needs its own classes and pgjdbc, nothing else. */
    static boolean minimalService(String entry) {
        String name = Paths.get(entry).getFileName().toString();
        return name.startsWith("postgresql-") && name.endsWith(".jar")
                || entry.endsWith("integration-tests" + File.separator + "target" + File.separator + "classes");
    }

    private static long[] run(String java, String agent, String cp, TestBed bed) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(java));
        if (agent != null) {
            cmd.add("-javaagent:" + agent);
        }
        cmd.addAll(List.of("-cp", cp, FirstQuery.class.getName(), bed.url(Route.DIRECT), bed.endpoints().user(),
                bed.endpoints().password()));
        long t0 = System.nanoTime();
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        long wall = (System.nanoTime() - t0) / 1_000_000;
        return new long[] {value(out, "FIRST-QUERY-AT-UPTIME-MS"), wall, value(out, "MAIN-THREAD-CPU-MS")};
    }

    private static long value(String out, String key) {
        String line = out.lines().filter(l -> l.startsWith(key + " ")).findFirst()
                .orElseThrow(() -> new IllegalStateException("no " + key + " in:\n" + out));
        return Long.parseLong(line.split(" ")[1]);
    }

    /** Our class path: the class loader's URLs under exec:java, java.class.path otherwise. */
    static List<String> classPath() throws Exception {
        ClassLoader cl = AgentStartup.class.getClassLoader();
        if (cl instanceof java.net.URLClassLoader) {
            List<String> entries = new ArrayList<>();
            for (java.net.URL u : ((java.net.URLClassLoader) cl).getURLs()) {
                entries.add(Paths.get(u.toURI()).toString());
            }
            return entries;
        }
        return Arrays.asList(System.getProperty("java.class.path").split(File.pathSeparator));
    }

    private static long median(List<Long> xs) {
        List<Long> s = new ArrayList<>(xs);
        Collections.sort(s);
        return s.get(s.size() / 2);
    }
}
