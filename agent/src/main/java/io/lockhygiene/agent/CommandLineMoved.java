package io.lockhygiene.agent;

/**
 * {@code java -jar lockhygiene-agent.jar ...}: the command line is its own jar, so that the agent carries
 * only what premain needs. Says where to go instead of failing with "no main manifest attribute".
 */
public final class CommandLineMoved {
    private CommandLineMoved() {
    }

    public static void main(String[] args) {
        String given = args.length == 0 ? "COMMAND" : String.join(" ", args);
        System.err.println("lockhygiene-agent.jar is the -javaagent only (java -javaagent:lockhygiene-agent.jar -jar"
                + " service.jar). The command line is its own jar: java -jar lockhygiene-cli.jar " + given);
        System.exit(2);
    }
}
