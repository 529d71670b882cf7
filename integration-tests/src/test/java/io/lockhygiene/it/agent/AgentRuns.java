package io.lockhygiene.it.agent;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/** How the agent tests run a service in a child JVM: its class path, the command, a bounded run and its output. */
final class AgentRuns {
    static final Path AGENT = Paths.get(System.getProperty("testbed.agentJar", "../agent/target/lockhygiene-agent.jar"));
    static final Path CLI = Paths.get(System.getProperty("testbed.cliJar", "../cli/target/lockhygiene-cli.jar"));

    /** The test class path without LockHygiene's own classes: the service has never heard of us. */
    static String serviceClassPath(boolean withDriver) {
        return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(e -> withDriver || !(e.contains("driver" + File.separator + "target") || e.contains("lockhygiene-driver")))
                .collect(Collectors.joining(File.pathSeparator));
    }

    static String launcherClassPath() {
        return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(e -> e.endsWith("integration-tests" + File.separator + "target" + File.separator + "classes"))
                .findFirst().orElseThrow();
    }

    record Run(int exit, String output) {
        String result() {
            return output.lines().filter(l -> l.startsWith("RESULT")).findFirst().orElse("no RESULT line:\n" + output);
        }

        int number(String name) {
            Matcher m = Pattern.compile(name + "=(\\d+)").matcher(result());
            return m.find() ? Integer.parseInt(m.group(1)) : -1;
        }
    }

    /** {@code java}, with {@code -javaagent:JAR[=OPTIONS]} unless the options are null ("" for none). */
    static List<String> command(String java, Path agentJar, String agentOptions) {
        List<String> cmd = new ArrayList<>(List.of(java));
        if (agentOptions != null) {
            cmd.add("-javaagent:" + agentJar.toAbsolutePath() + (agentOptions.isEmpty() ? "" : "=" + agentOptions));
        }
        return cmd;
    }

    /** Runs a child JVM to its end, at most 120 s (then it is killed and the test fails), output and errors together. */
    static Run run(List<String> cmd) throws IOException, InterruptedException {
        Path out = Files.createTempFile("lockhygiene-agent-test", ".out");
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            p.getOutputStream().close();
            boolean ended = p.waitFor(120, TimeUnit.SECONDS);
            if (!ended) {
                p.destroyForcibly();
            }
            String output = new String(Files.readAllBytes(out), StandardCharsets.UTF_8);
            assertTrue(ended, "no end within 120 s:\n" + output);
            return new Run(p.exitValue(), output);
        } finally {
            Files.deleteIfExists(out);
        }
    }

    static String java() {
        return Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    }


    private AgentRuns() {
    }
}
