package io.lockhygiene.agent;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Three narrow edits:
 * <ul>
 *   <li>{@code org.postgresql.Driver.connect(String, Properties)}: every returned connection goes through
 *       {@link AgentHooks#onConnect} (DriverManager, PGSimpleDataSource and every pool that opens
 *       connections through them);</li>
 *   <li>{@code close()} of HikariCP's {@code ProxyConnection} and Commons DBCP2's
 *       {@code PoolableConnection}: {@link AgentHooks#onPoolReturn} first (the return event).</li>
 * </ul>
 * Every other class is one string comparison. A class loader that cannot see our hooks is left alone.
 * A class as it first loads (the -javaagent case) is edited by {@link MethodWrap}, a few hundred bytes of
 * our own code, or taken as the build edited it when it is the class file the build saw
 * ({@link Pregenerated}); a class already loaded (attach) cannot gain a method, so {@link InsertHooks}
 * inserts the calls into the method itself with the ASM that ByteBuddy carries, loaded only then. (ByteBuddy's
 * AgentBuilder loads some 900 classes, over half a second; ASM's ~30 classes cost tens of milliseconds
 * before a service's first query, which is why premain does without them.)
 */
final class PgjdbcTransformer implements ClassFileTransformer {
    static final String DRIVER = "org/postgresql/Driver";
    static final String HIKARI = "com/zaxxer/hikari/pool/ProxyConnection";
    static final String DBCP2 = "org/apache/commons/dbcp2/PoolableConnection";
    static final String HOOKS = "io/lockhygiene/agent/AgentHooks";
    static final String CONNECT_DESC = "(Ljava/lang/String;Ljava/util/Properties;)Ljava/sql/Connection;";
    static final String ON_CONNECT = "onConnect";
    static final String ON_CONNECT_DESC =
            "(Ljava/sql/Connection;Ljava/sql/Driver;Ljava/lang/String;Ljava/util/Properties;)Ljava/sql/Connection;";
    static final String ON_POOL_RETURN = "onPoolReturn";
    static final String ON_POOL_RETURN_DESC = "(Ljava/sql/Connection;)V";
    /** The classes edited (the build's {@link Pregenerate} makes their edits ahead too). */
    static final String[] TARGETS = {DRIVER, HIKARI, DBCP2};
    private final AtomicBoolean reported = new AtomicBoolean();
    /** True once the system class loader's pgjdbc Driver loaded and we edited it. Guarded by {@link #wrapped}. */
    private boolean driverEditedOnClassPath;
    /**
     * Classes edited by {@link MethodWrap} as they loaded, per class loader: when such a class is redefined
     * (a debugger's hot swap) or, attached, retransformed, the new bytes get the same edit, since a
     * redefinition may not remove the added method. (Started with -javaagent this transformer is not
     * retransformable: another agent's retransformation starts from our edited bytes without asking us.)
     * Guarded by itself; nothing inside but set operations.
     */
    private final Map<ClassLoader, Set<String>> wrapped = new WeakHashMap<>();

    static boolean isTarget(String internalName) {
        return DRIVER.equals(internalName) || HIKARI.equals(internalName) || DBCP2.equals(internalName);
    }

    @Override
    public byte[] transform(ClassLoader loader, String className, Class<?> redefined, ProtectionDomain domain,
                            byte[] bytes) {
        if (className == null || !isTarget(className)) {
            return null;
        }
        try {
            if (!seesOurHooks(loader)) {
                report(className, "its class loader cannot see io.lockhygiene.agent.AgentHooks");
                return null;
            }
            boolean driver = DRIVER.equals(className);
            if (redefined == null || wrappedAtLoad(loader, className)) {
                byte[] edited = Pregenerated.edited(className, bytes); // this very class file, edited by the build
                try {
                    if (edited == null) {
                        edited = wrapAtLoad(className, bytes);
                    }
                } catch (IllegalArgumentException notUnderstood) {
                    if (redefined != null) {
                        return null;
                    }
                    edited = InsertHooks.edit(bytes, driver); // ASM knows more class files
                    rememberClassPathDriver(loader, driver);
                    return edited;
                }
                if (edited != null && redefined == null) {
                    rememberWrapped(loader, className);
                    rememberClassPathDriver(loader, driver);
                }
                return edited;
            }
            return InsertHooks.edit(bytes, driver); // attach: a loaded class cannot gain a method
        } catch (RuntimeException | LinkageError e) {
            report(className, e.toString());
            return null;
        }
    }

    /**
     * The edit of a target class as it loads (the build makes the same one ahead, {@link Pregenerate}).
     *
     * @throws IllegalArgumentException when MethodWrap does not understand the class file
     */
    static byte[] wrapAtLoad(String className, byte[] bytes) {
        return DRIVER.equals(className)
                ? MethodWrap.wrap(bytes, "connect", CONNECT_DESC, MethodWrap.RESULT_THROUGH_HOOK, HOOKS, ON_CONNECT, ON_CONNECT_DESC)
                : MethodWrap.wrap(bytes, "close", "()V", MethodWrap.HOOK_FIRST, HOOKS, ON_POOL_RETURN, ON_POOL_RETURN_DESC);
    }

    /**
     * Started with -javaagent and {@code agentWatch=auto}: when the system class loader (the class path) can
     * see pgjdbc's Driver, loads (does not initialise) each target it can see, so our edit happens now, then
     * removes this transformer. A registered transformer costs every later class load the JVM's hook (a call
     * into Java, and for a class from the JDK's archive a read of its class file: about 20 ms of a minimal
     * service's start-up); once the class path's targets are edited there is nothing left there to edit. A
     * target another class loader loads later is then not edited ({@code agentWatch=always} keeps watching).
     * Runs in premain, on the thread that will run the service's main, so no class-loading lock is held.
     *
     * @return true when this transformer was removed; false when pgjdbc is elsewhere (a Spring Boot jar, a
     *         servlet container) or its Driver was not edited here (loaded before us), and it keeps watching
     */
    boolean editClassPathTargetsAndStop(Instrumentation inst) {
        ClassLoader system = ClassLoader.getSystemClassLoader();
        if (system.getResource(DRIVER + ".class") == null) {
            return false;
        }
        for (String target : TARGETS) {
            if (system.getResource(target + ".class") != null) {
                try {
                    Class.forName(target.replace('/', '.'), false, system); // loads; no static initialiser runs
                } catch (ClassNotFoundException | LinkageError e) {
                    // cannot load (a pool without its own dependencies): the service cannot either
                }
            }
        }
        synchronized (wrapped) {
            if (!driverEditedOnClassPath) {
                return false;
            }
        }
        return inst.removeTransformer(this);
    }

    private void rememberClassPathDriver(ClassLoader loader, boolean driver) {
        if (driver && loader == ClassLoader.getSystemClassLoader()) {
            synchronized (wrapped) {
                driverEditedOnClassPath = true;
            }
        }
    }

    private boolean wrappedAtLoad(ClassLoader loader, String className) {
        synchronized (wrapped) {
            Set<String> names = wrapped.get(loader);
            return names != null && names.contains(className);
        }
    }

    private void rememberWrapped(ClassLoader loader, String className) {
        synchronized (wrapped) {
            Set<String> names = wrapped.get(loader);
            if (names == null) {
                names = new HashSet<>();
                wrapped.put(loader, names);
            }
            names.add(className);
        }
    }

    private static boolean seesOurHooks(ClassLoader loader) {
        try {
            return Class.forName(AgentHooks.class.getName(), false, loader) == AgentHooks.class;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    private void report(String className, String why) {
        if (reported.compareAndSet(false, true)) {
            System.err.println("[lockhygiene agent] could not instrument " + className.replace('/', '.')
                    + "; the service runs unprotected there: " + why);
        }
    }
}
