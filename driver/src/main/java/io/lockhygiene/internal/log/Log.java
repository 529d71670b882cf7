package io.lockhygiene.internal.log;

import java.lang.reflect.Method;

/**
 * LockHygiene's one logger, "io.lockhygiene". It writes to the application's SLF4J: linked directly when
 * SLF4J is visible from our own class loader (the driver on the application's class path), found through
 * the thread's context class loader when it is not (the agent, loaded by the system class loader, in front
 * of a Spring Boot fat jar or a servlet container), and to stderr when there is no SLF4J at all.
 * Resolved once, at the first message; messages use SLF4J's "{}" placeholders.
 */
public final class Log {
    private static final String NAME = "io.lockhygiene";
    private static volatile Sink sink;

    private Log() {
    }

    /** Command-line tools print their own output: no log lines at all. */
    public static void quiet() {
        sink = new Sink() {
            @Override
            public boolean debugEnabled() {
                return false;
            }

            @Override
            public void log(Level level, String message, Throwable t) {
                // the command prints what matters itself
            }
        };
    }

    public static boolean isDebugEnabled() {
        return sink().debugEnabled();
    }

    public static void debug(String format, Object... args) {
        Sink s = sink();
        if (s.debugEnabled()) {
            s.log(Level.DEBUG, format(format, args), null);
        }
    }

    public static void info(String format, Object... args) {
        sink().log(Level.INFO, format(format, args), throwable(args));
    }

    public static void warn(String format, Object... args) {
        sink().log(Level.WARN, format(format, args), throwable(args));
    }

    public static void error(String format, Object... args) {
        sink().log(Level.ERROR, format(format, args), throwable(args));
    }

    enum Level { DEBUG, INFO, WARN, ERROR }

    interface Sink {
        boolean debugEnabled();

        void log(Level level, String message, Throwable t);
    }

    /**
     * SLF4J on our own class path (the driver next to the application) is ours for good. Otherwise (the
     * agent, loaded where the application's SLF4J is not visible) each call logs to the SLF4J of the
     * calling thread's context class loader, so that in an application server each application's messages
     * go to its own logging, kept with that SLF4J's classes (a ClassValue) so that no class loader is held.
     */
    private static Sink sink() {
        Sink own = ownSink();
        if (own != null) {
            return own;
        }
        ClassLoader context = Thread.currentThread().getContextClassLoader();
        if (context != null) {
            try {
                return CONTEXT_SINKS.get(Class.forName("org.slf4j.LoggerFactory", false, context));
            } catch (ClassNotFoundException | LinkageError | IllegalStateException none) {
                // no SLF4J there
            }
        }
        return STDERR;
    }

    private static final Sink STDERR = new StderrSink();
    private static final Sink NONE_OF_OUR_OWN = new StderrSink();

    private static final ClassValue<Sink> CONTEXT_SINKS = new ClassValue<Sink>() {
        @Override
        protected Sink computeValue(Class<?> loggerFactory) {
            try {
                return new ReflectiveSlf4jSink(loggerFactory.getClassLoader(), NAME);
            } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
                throw new IllegalStateException(e);
            }
        }
    };

    private static Sink ownSink() {
        Sink s = sink;
        if (s == null) {
            synchronized (Log.class) {
                s = sink;
                if (s == null) {
                    s = resolveOwn();
                    sink = s;
                }
            }
        }
        return s == NONE_OF_OUR_OWN ? null : s;
    }

    private static Sink resolveOwn() {
        try {
            Class.forName("org.slf4j.LoggerFactory", false, Log.class.getClassLoader());
            return new Slf4jSink(NAME);
        } catch (ClassNotFoundException | LinkageError notOnOurPath) {
            return NONE_OF_OUR_OWN; // the agent: look where the application is, call by call
        }
    }

    /** The last argument, when it is a Throwable, is logged with its stack (SLF4J's convention). */
    private static Throwable throwable(Object[] args) {
        return args.length > 0 && args[args.length - 1] instanceof Throwable ? (Throwable) args[args.length - 1] : null;
    }

    static String format(String format, Object[] args) {
        StringBuilder out = new StringBuilder(format.length() + 64);
        int arg = 0;
        int from = 0;
        int at;
        int usable = args.length - (throwable(args) != null ? 1 : 0);
        while ((at = format.indexOf("{}", from)) >= 0 && arg < usable) {
            out.append(format, from, at).append(args[arg++]);
            from = at + 2;
        }
        return out.append(format, from, format.length()).toString();
    }

    /** SLF4J linked directly: loaded only when SLF4J is on our own class path. */
    private static final class Slf4jSink implements Sink {
        private final org.slf4j.Logger logger;

        Slf4jSink(String name) {
            logger = org.slf4j.LoggerFactory.getLogger(name);
        }

        @Override
        public boolean debugEnabled() {
            return logger.isDebugEnabled();
        }

        @Override
        public void log(Level level, String message, Throwable t) {
            switch (level) {
                case DEBUG:
                    logger.debug(message, t);
                    break;
                case INFO:
                    logger.info(message, t);
                    break;
                case WARN:
                    logger.warn(message, t);
                    break;
                default:
                    logger.error(message, t);
            }
        }
    }

    /** The application's SLF4J, in a class loader we cannot link against. */
    private static final class ReflectiveSlf4jSink implements Sink {
        private final Object logger;
        private final Method debugEnabled;
        private final Method[] byLevel = new Method[4];

        ReflectiveSlf4jSink(ClassLoader loader, String name) throws ReflectiveOperationException {
            Class<?> factory = Class.forName("org.slf4j.LoggerFactory", true, loader);
            Class<?> loggerType = Class.forName("org.slf4j.Logger", false, loader);
            logger = factory.getMethod("getLogger", String.class).invoke(null, name);
            debugEnabled = loggerType.getMethod("isDebugEnabled");
            String[] names = {"debug", "info", "warn", "error"};
            for (int i = 0; i < names.length; i++) {
                byLevel[i] = loggerType.getMethod(names[i], String.class, Throwable.class);
            }
        }

        @Override
        public boolean debugEnabled() {
            try {
                return (Boolean) debugEnabled.invoke(logger);
            } catch (ReflectiveOperationException | RuntimeException e) {
                return false;
            }
        }

        @Override
        public void log(Level level, String message, Throwable t) {
            try {
                byLevel[level.ordinal()].invoke(logger, message, t);
            } catch (ReflectiveOperationException | RuntimeException e) {
                new StderrSink().log(level, message, t);
            }
        }
    }

    /** No SLF4J anywhere: WARN and ERROR (and INFO) to stderr; DEBUG is off. */
    private static final class StderrSink implements Sink {
        @Override
        public boolean debugEnabled() {
            return false;
        }

        @Override
        public void log(Level level, String message, Throwable t) {
            System.err.println("[" + level + "] " + NAME + " - " + message);
            if (t != null) {
                t.printStackTrace();
            }
        }
    }
}
