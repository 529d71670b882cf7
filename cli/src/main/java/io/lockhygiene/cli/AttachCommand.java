package io.lockhygiene.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.lang.reflect.Method;
import java.nio.file.Paths;
import java.util.concurrent.Callable;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code attach PID [OPTIONS]}: loads the agent into a running JVM. */
@Command(name = "attach", usageHelpAutoWidth = true,
        description = {"Load the agent into a running JVM.", "Loads LockHygiene into the JVM with that pid, for a service you cannot restart. OPTIONS are"
                + " the agent's: the driver's keys without 'lockhygiene.', comma-separated"
                + " (mode=emulate,poolMode=transaction).", "Connections opened from then on are guarded; ones already"
                + " open are not. Needs a JDK (the attach API)."})
final class AttachCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "PID", description = "the process to attach to")
    String pid;

    @Parameters(index = "1", arity = "0..1", paramLabel = "OPTIONS", description = "agent options, e.g. mode=emulate")
    String options;

    @Option(names = "--agent", paramLabel = "JAR",
            description = "the agent jar to load (default: the one inside this jar)")
    String agentJar;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "this help")
    boolean help;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        String jar;
        try {
            jar = agentJar != null ? Paths.get(agentJar).toAbsolutePath().toString() : EmbeddedAgent.extract().toString();
        } catch (IOException | RuntimeException e) {
            err.println("Cannot find the agent jar (" + e + "); pass --agent path/to/lockhygiene-agent.jar");
            return 2;
        }
        try {
            // jdk.attach is in every JDK (not in a bare JRE); reached reflectively so the jar loads without it.
            Class<?> vmClass = Class.forName("com.sun.tools.attach.VirtualMachine");
            Object vm = vmClass.getMethod("attach", String.class).invoke(null, pid);
            try {
                Method load = vmClass.getMethod("loadAgent", String.class, String.class);
                load.invoke(vm, jar, options == null ? "" : options);
            } finally {
                vmClass.getMethod("detach").invoke(vm);
            }
            out.println("LockHygiene agent loaded into " + pid);
            return 0;
        } catch (ClassNotFoundException e) {
            err.println("This Java has no attach API (jdk.attach): run the attach command with a JDK.");
            return 2;
        } catch (Exception e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            err.println("Could not attach to " + pid + ": " + cause);
            return 2;
        }
    }
}
