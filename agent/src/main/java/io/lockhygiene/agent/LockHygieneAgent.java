package io.lockhygiene.agent;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import java.lang.instrument.Instrumentation;
import java.util.concurrent.atomic.AtomicBoolean;

import io.lockhygiene.log.Log;
import io.lockhygiene.settings.Settings;
import io.lockhygiene.settings.SettingsReader;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.utility.JavaModule;

/**
 * {@code java -javaagent:lockhygiene-agent.jar[=mode=emulate,poolMode=transaction] -jar service.jar}, or
 * {@code java -jar lockhygiene-agent.jar attach PID [options]}. Instruments three narrow places: the exit of
 * {@code org.postgresql.Driver.connect} (DriverManager, PGSimpleDataSource and every pool that opens
 * connections through them get a guarded connection) and the {@code close()} of HikariCP's and Commons
 * DBCP2's pooled connections (the return event). A service without pgjdbc matches nothing.
 */
public final class LockHygieneAgent {
    private static final AtomicBoolean INSTALLED = new AtomicBoolean();

    private LockHygieneAgent() {
    }

    public static void premain(String args, Instrumentation inst) {
        install(args, inst);
    }

    public static void agentmain(String args, Instrumentation inst) {
        install(args, inst);
    }

    static void install(String args, Instrumentation inst) {
        if (!INSTALLED.compareAndSet(false, true)) {
            Log.warn("LockHygiene agent is already installed in this JVM; ignoring the second one");
            return;
        }
        Settings settings;
        try {
            settings = SettingsReader.read(AgentOptions.parse(args), System.getProperties(), System::getenv);
        } catch (IllegalArgumentException e) {
            System.err.println("[lockhygiene agent] not installed, the service runs unprotected: " + e.getMessage());
            return;
        }
        AgentHooks.install(settings);
        AtomicBoolean reported = new AtomicBoolean();
        try {
            new AgentBuilder.Default()
                    .disableClassFormatChanges()
                    .with(AgentBuilder.RedefinitionStrategy.RETRANSFORMATION)
                    .with(AgentBuilder.InitializationStrategy.NoOp.INSTANCE)
                    .with(AgentBuilder.TypeStrategy.Default.DECORATE)
                    .with(new AgentBuilder.Listener.Adapter() {
                        @Override
                        public void onError(String typeName, ClassLoader classLoader, JavaModule module, boolean loaded,
                                            Throwable throwable) {
                            if (reported.compareAndSet(false, true)) {
                                System.err.println("[lockhygiene agent] could not instrument " + typeName
                                        + "; the service runs unprotected there: " + throwable);
                            }
                        }
                    })
                    .type(named("org.postgresql.Driver"))
                    .transform((builder, type, loader, module, domain) -> connectAdvice(builder))
                    .type(named("com.zaxxer.hikari.pool.ProxyConnection").or(named("org.apache.commons.dbcp2.PoolableConnection")))
                    .transform((builder, type, loader, module, domain) -> returnAdvice(builder))
                    .installOn(inst);
        } catch (RuntimeException | LinkageError e) {
            System.err.println("[lockhygiene agent] not installed, the service runs unprotected: " + e);
            return;
        }
        System.err.println("[lockhygiene agent] installed: " + settings);
    }

    private static DynamicType.Builder<?> connectAdvice(DynamicType.Builder<?> builder) {
        return builder.visit(Advice.to(DriverConnectAdvice.class)
                .on(named("connect").and(takesArguments(2)).and(takesArgument(0, String.class))));
    }

    private static DynamicType.Builder<?> returnAdvice(DynamicType.Builder<?> builder) {
        return builder.visit(Advice.to(PoolReturnAdvice.class).on(named("close").and(takesArguments(0))));
    }

    /** For tests and tools: the type a matcher would see. */
    static boolean isInstrumented(TypeDescription type) {
        return type.getName().equals("org.postgresql.Driver");
    }
}
