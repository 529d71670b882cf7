package io.lockhygiene.cli;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine;

/**
 * {@code java -jar lockhygiene-cli.jar COMMAND}: one picocli parser for every command (a jar of its
 * own: never on a service's class path, so it may carry picocli and pgjdbc). Exit status: 0 clean, 1 findings or problems, 2 usage or I/O error.
 */
@Command(name = "java -jar lockhygiene-cli.jar", usageHelpAutoWidth = true,
        subcommands = {ScanCommand.class, DoctorCommand.class, MonitorCommand.class, AttachCommand.class},
        description = "LockHygiene's command-line tools. COMMAND --help: help for one command.",
        footer = "Exit status: 0 clean, 1 findings or problems, 2 usage or I/O error."
                + " Durations: 0, 500ms, 30s, 5m (a bare number is milliseconds).")
public final class Main implements Callable<Integer> {
    @Option(names = {"-h", "--help"}, usageHelp = true, description = "this help")
    boolean help;

    @Spec
    CommandSpec spec;

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs one command line; returns the exit status. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        CommandLine cl = new CommandLine(new Main());
        cl.setOut(new PrintWriter(new java.io.OutputStreamWriter(out, StandardCharsets.UTF_8), true));
        cl.setErr(new PrintWriter(new java.io.OutputStreamWriter(err, StandardCharsets.UTF_8), true));
        cl.setExecutionExceptionHandler((e, command, parsed) -> {
            command.getErr().println(command.getCommandName() + ": failed: " + e);
            return 2;
        });
        int exit = cl.execute(args);
        cl.getOut().flush();
        cl.getErr().flush();
        return exit;
    }

    /** No command: the usage, exit 2. */
    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        return 2;
    }
}
