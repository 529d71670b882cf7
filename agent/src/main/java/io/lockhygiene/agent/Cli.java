package io.lockhygiene.agent;

import java.io.File;
import java.io.PrintStream;
import java.lang.reflect.Method;

/**
 * {@code java -jar lockhygiene-agent.jar COMMAND}. Exit 0 on success, 2 on usage or I/O errors.
 */
public final class Cli {

    private Cli() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0 || "--help".equals(args[0]) || "-h".equals(args[0]) || "help".equals(args[0])) {
            out.println(usage());
            return args.length == 0 ? 2 : 0;
        }
        if ("attach".equals(args[0])) {
            return attach(args, out, err);
        }
        java.util.List<String> rest = java.util.Arrays.asList(args).subList(1, args.length);
        try {
            switch (args[0]) {
                case "scan":
                    return io.lockhygiene.agent.cli.ScanCommand.run(rest, out, err);
                case "doctor":
                    return io.lockhygiene.agent.cli.DbCommands.doctor(rest, out, err);
                case "monitor":
                    return io.lockhygiene.agent.cli.DbCommands.monitor(rest, out, err);
                default:
                    break;
            }
        } catch (RuntimeException | StackOverflowError e) {
            err.println(args[0] + ": failed: " + e);
            return 2;
        }
        err.println("Unknown command '" + args[0] + "'.\n" + usage());
        return 2;
    }

    static String usage() {
        return "Usage: java -jar lockhygiene-agent.jar COMMAND\n"
                + "  scan PATH...           static check of .sql/.java/.kt/.xml files (--format text|json|sarif)\n"
                + "  doctor --url URL       is a pooler in between, idle sessions holding advisory locks, long waits\n"
                + "  monitor --url URL      advisory waits over a threshold (--threshold 30s --interval 10s --once --json)\n"
                + "  attach PID [OPTIONS]   load the agent into a running JVM (OPTIONS: mode=emulate,poolMode=transaction,...)\n"
                + "  COMMAND --help         help for one command\n"
                + "Exit status: 0 clean, 1 findings or problems, 2 usage or I/O error.";
    }

    private static int attach(String[] args, PrintStream out, PrintStream err) {
        if (args.length < 2 || "--help".equals(args[1])) {
            out.println("Usage: java -jar lockhygiene-agent.jar attach PID [OPTIONS]\n"
                    + "Loads LockHygiene into the JVM with that pid, for a service you cannot restart. OPTIONS are the\n"
                    + "agent's: the driver's keys without 'lockhygiene.', comma-separated (mode=emulate,poolMode=transaction).\n"
                    + "Connections opened from then on are guarded; ones already open are not.");
            return args.length < 2 ? 2 : 0;
        }
        String jar;
        try {
            jar = new File(Cli.class.getProtectionDomain().getCodeSource().getLocation().toURI()).getPath();
        } catch (Exception e) {
            err.println("Cannot find the agent jar: " + e);
            return 2;
        }
        try {
            // jdk.attach is in every JDK (not in a bare JRE); reached reflectively so the agent loads without it.
            Class<?> vmClass = Class.forName("com.sun.tools.attach.VirtualMachine");
            Object vm = vmClass.getMethod("attach", String.class).invoke(null, args[1]);
            try {
                Method load = vmClass.getMethod("loadAgent", String.class, String.class);
                load.invoke(vm, jar, args.length > 2 ? args[2] : "");
            } finally {
                vmClass.getMethod("detach").invoke(vm);
            }
            out.println("LockHygiene agent loaded into " + args[1]);
            return 0;
        } catch (ClassNotFoundException e) {
            err.println("This Java has no attach API (jdk.attach): run the attach command with a JDK.");
            return 2;
        } catch (Exception e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            err.println("Could not attach to " + args[1] + ": " + cause);
            return 2;
        }
    }
}
