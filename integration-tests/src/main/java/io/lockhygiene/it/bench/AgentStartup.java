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
 * Args: [ROUNDS] (default 15). Needs the agent jar built (mvn install).
 */
public final class AgentStartup {
    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 15;
        Path agent = Paths.get(System.getProperty("testbed.agentJar", "agent/target/lockhygiene-agent.jar")).toAbsolutePath();
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        // The service's class path: this module's classes and its libraries, without any jar of ours (the agent,
        // the CLI and the JUnit extension carry the core too; on the class path they would serve our classes
        // ahead of the agent jar and measure another layout than a service's).
        String cp = classPath().stream().filter(AgentStartup::notOurs).collect(Collectors.joining(File.pathSeparator));
        Path empty = EmptyAgent.writeJar(Files.createTempDirectory("lockhygiene-empty-agent"));
        try (TestBed bed = TestBed.start()) {
            List<Long> plainUp = new ArrayList<>();
            List<Long> emptyUp = new ArrayList<>();
            List<Long> agentUp = new ArrayList<>();
            List<Long> plainWall = new ArrayList<>();
            List<Long> emptyWall = new ArrayList<>();
            List<Long> agentWall = new ArrayList<>();
            for (int i = 0; i < rounds + 2; i++) { // two warm-up rounds (file cache) are dropped
                long[] a = run(java, null, cp, bed);
                long[] e = run(java, empty.toString(), cp, bed);
                long[] b = run(java, agent.toString(), cp, bed);
                if (i >= 2) {
                    plainUp.add(a[0]);
                    plainWall.add(a[1]);
                    emptyUp.add(e[0]);
                    emptyWall.add(e[1]);
                    agentUp.add(b[0]);
                    agentWall.add(b[1]);
                }
            }
            System.out.printf("%nAgent start-up, %d rounds interleaved (plain, empty agent, ours), medians (JVM %s):%n",
                    rounds, System.getProperty("java.version"));
            System.out.printf("| measure | plain pgjdbc | empty agent | with agent | added | ratio | added over the empty agent |%n"
                    + "|---|---|---|---|---|---|---|%n");
            row("JVM uptime at first query", median(plainUp), median(emptyUp), median(agentUp));
            row("wall time to first query", median(plainWall), median(emptyWall), median(agentWall));
        }
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

    private static void row(String name, long plain, long empty, long agent) {
        System.out.printf("| %s | %d ms | %d ms | %d ms | %d ms | %.2f | %d ms |%n", name, plain, empty, agent,
                agent - plain, (double) agent / plain, agent - empty);
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
        String line = out.lines().filter(l -> l.startsWith("FIRST-QUERY-AT-UPTIME-MS")).findFirst()
                .orElseThrow(() -> new IllegalStateException("no first query:\n" + out));
        return new long[] {Long.parseLong(line.split(" ")[1]), wall};
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
