package io.lockhygiene.agent;


import java.lang.instrument.Instrumentation;
import java.util.concurrent.atomic.AtomicBoolean;

import io.lockhygiene.internal.log.Log;
import io.lockhygiene.internal.settings.SettingsReader;
import io.lockhygiene.settings.LockHygieneProperty;
import io.lockhygiene.settings.Settings;

/**
 * {@code java -javaagent:lockhygiene-agent.jar[=mode=emulate,poolMode=transaction] -jar service.jar}, or
 * {@code java -jar lockhygiene-cli.jar attach PID [options]}. Instruments three narrow places (see
 * {@link PgjdbcTransformer}); a service without pgjdbc matches nothing.
 */
public final class LockHygieneAgent {
    private static final AtomicBoolean INSTALLED = new AtomicBoolean();

    private LockHygieneAgent() {
    }

    public static void premain(String args, Instrumentation inst) {
        install(args, inst, false);
    }

    public static void agentmain(String args, Instrumentation inst) {
        install(args, inst, true);
    }

    /** @param attached true when loaded into a running JVM: classes already loaded are retransformed */
    static void install(String args, Instrumentation inst, boolean attached) {
        if (!INSTALLED.compareAndSet(false, true)) {
            Log.warn("LockHygiene agent is already installed in this JVM; ignoring the second one");
            return;
        }
        Settings settings;
        java.util.Map<String, String> options;
        Lookup explicit;
        boolean watchAlways;
        try {
            // without options the parser's class is not even loaded (a start-up pays for each class)
            options = args == null || args.trim().isEmpty() ? java.util.Map.of() : AgentOptions.parse(args);
            settings = SettingsReader.read(options, System.getProperties(), new Lookup(null));
            explicit = new Lookup(options);
            watchAlways = attached || watchAlways(SettingsReader.jvmWide(LockHygieneProperty.AGENT_WATCH, explicit));
        } catch (IllegalArgumentException e) {
            System.err.println("[lockhygiene agent] not installed, the service runs unprotected: " + e.getMessage());
            return;
        }
        AgentHooks.install(settings);
        io.lockhygiene.internal.events.ProcessReportsSwitch.installOnce(explicit);
        String watching = "";
        try {
            PgjdbcTransformer transformer = new PgjdbcTransformer();
            // At start-up, not retransformable: the JVM then keeps no copy of every class's bytes for
            // retransformation (some 1,500 classes before a service's first query), and our edit stays part
            // of the bytes another agent's retransformation starts from. Attached, we must retransform the
            // classes already loaded ourselves.
            inst.addTransformer(transformer, attached);
            if (!watchAlways) {
                watching = transformer.editClassPathTargetsAndStop(inst)
                        ? ", lockhygiene.agentWatch=auto (pgjdbc on the class path edited at start-up, class loading"
                                + " no longer watched)"
                        : ", lockhygiene.agentWatch=auto (watching class loading for pgjdbc)";
            } else if (!attached) {
                watching = ", lockhygiene.agentWatch=always";
            }
            if (attached) {
                // A running service has loaded pgjdbc and its pool already: edit those classes now.
                for (Class<?> loaded : inst.getAllLoadedClasses()) {
                    if (PgjdbcTransformer.isTarget(loaded.getName().replace('.', '/')) && inst.isModifiableClass(loaded)) {
                        inst.retransformClasses(loaded);
                    }
                }
            }
        } catch (Exception | LinkageError e) {
            System.err.println("[lockhygiene agent] not installed, the service runs unprotected: " + e);
            return;
        }
        System.err.println("[lockhygiene agent] installed: " + settings + watching);
    }

    /**
     * {@code agentWatch}: {@code auto} (unset) lets the transformer stop once the class path's targets are
     * edited ({@link PgjdbcTransformer}); {@code always} keeps it for every class loader.
     */
    private static boolean watchAlways(String value) {
        if (value == null || value.trim().equalsIgnoreCase("auto")) {
            return false;
        }
        if (value.trim().equalsIgnoreCase("always")) {
            return true;
        }
        throw new IllegalArgumentException("Bad value '" + value + "' for " + LockHygieneProperty.AGENT_WATCH.key()
                + "; allowed: auto, always");
    }

    /**
     * The agent's options, or the environment when there are none: one plain class for both (a lambda here
     * would bootstrap java.lang.invoke at start-up, and each class more costs a start-up its loading).
     */
    private static final class Lookup implements java.util.function.Function<String, String> {
        private final java.util.Map<String, String> options;

        Lookup(java.util.Map<String, String> options) {
            this.options = options;
        }

        @Override
        public String apply(String name) {
            return options != null ? options.get(name) : System.getenv(name);
        }
    }
}
