package io.lockhygiene.cli;

import java.io.PrintWriter;
import java.sql.SQLException;
import java.util.concurrent.Callable;

import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import io.lockhygiene.internal.log.Log;

/** A command that talks to a database: its connection options, help, and the exit 2 when it cannot be reached. */
abstract class DatabaseCommand implements Callable<Integer> {
    @Mixin
    ConnectionOptions connection;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "this help")
    boolean help;

    @Spec
    CommandSpec spec;

    @Override
    public final Integer call() {
        Log.quiet();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Database db;
        try {
            db = connection.open();
        } catch (IllegalArgumentException | SQLException e) {
            err.println(spec.name() + ": " + e.getMessage());
            return 2;
        }
        return run(db, out, err);
    }

    /** The command's work; returns the exit status. */
    abstract int run(Database db, PrintWriter out, PrintWriter err);
}
