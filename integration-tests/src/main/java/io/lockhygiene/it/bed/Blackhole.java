package io.lockhygiene.it.bed;

import java.util.ArrayList;
import java.util.List;

/**
 * Cuts one TCP connection on loopback the way a network partition does: every packet between the server's
 * port and the client's port is dropped (two iptables rules on INPUT, which every loopback packet passes),
 * so neither side hears a reset or a close, and only keepalives or timeouts can tell. A user-space proxy
 * cannot do this: its kernel answers the keepalives. Needs root and iptables ({@code bin/setup} installs it);
 * without them it fails with the command that installs them, never silently. Rules carry a comment of
 * their own, and leftovers of a killed run are removed first.
 */
public final class Blackhole implements AutoCloseable {
    private static final String TAG = "lockhygiene-testbed-blackhole";
    /** Leftovers of earlier runs are removed once per JVM (later cuts of this run are live). */
    private static boolean cleaned;
    private final List<List<String>> rules = new ArrayList<>();

    private Blackhole() {
    }

    /** Drops every packet of the connection between 127.0.0.1:{@code serverPort} and 127.0.0.1:{@code clientPort}. */
    public static Blackhole cut(int serverPort, int clientPort) {
        check();
        removeLeftovers();
        Blackhole b = new Blackhole();
        b.add(serverPort, clientPort);
        b.add(clientPort, serverPort);
        return b;
    }

    private void add(int from, int to) {
        List<String> rule = List.of("INPUT", "-i", "lo", "-p", "tcp", "--sport", Integer.toString(from), "--dport",
                Integer.toString(to), "-m", "comment", "--comment", TAG, "-j", "DROP");
        iptables("-I", rule);
        rules.add(rule);
    }

    private static void check() {
        if (!Processes.isRoot()) {
            throw new BedException("Cutting a connection needs root (iptables): run the tests as root, as CI does");
        }
        if (Processes.run(List.of("iptables", "--version"), null, 10).exitCode != 0) {
            throw new BedException("iptables is missing: apt-get update && apt-get install -y iptables (bin/setup does)");
        }
    }

    private static synchronized void removeLeftovers() {
        if (cleaned) {
            return;
        }
        cleaned = true;
        Processes.Result listed = Processes.run(List.of("iptables", "-S", "INPUT"), null, 10);
        for (String line : listed.output.split("\n")) {
            if (line.startsWith("-A INPUT") && line.contains(TAG)) {
                List<String> args = new ArrayList<>(List.of("iptables", "-D"));
                for (String w : line.substring(3).trim().split(" ")) {
                    args.add(w.replace("\"", ""));
                }
                Processes.run(args, null, 10);
            }
        }
    }

    private static void iptables(String op, List<String> rule) {
        List<String> args = new ArrayList<>(List.of("iptables", op));
        args.addAll(rule);
        Processes.Result r = Processes.run(args, null, 10);
        if (r.exitCode != 0) {
            throw new BedException("iptables " + op + " failed: " + r.output);
        }
    }

    /** The connection answers again. */
    @Override
    public void close() {
        for (List<String> rule : rules) {
            iptables("-D", rule);
        }
        rules.clear();
    }
}
