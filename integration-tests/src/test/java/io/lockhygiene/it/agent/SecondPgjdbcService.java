package io.lockhygiene.it.agent;

import java.net.URL;
import java.net.URLClassLoader;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.util.Properties;

/**
 * An unchanged service with pgjdbc on its class path that later loads a second pgjdbc of its own (a
 * plugin's class loader that takes {@code org.postgresql} from its own jar first). Args: URL USER PASSWORD.
 * Prints {@code RESULT first=CLASS second=CLASS}: the classes of the two connections.
 */
public final class SecondPgjdbcService {

    public static void main(String[] args) throws Exception {
        String first;
        try (Connection c = DriverManager.getConnection(args[0], args[1], args[2])) {
            first = c.getClass().getName();
        }
        URL pgjdbc = org.postgresql.Driver.class.getProtectionDomain().getCodeSource().getLocation();
        String second;
        try (PluginLoader plugin = new PluginLoader(pgjdbc)) {
            Driver driver = (Driver) Class.forName("org.postgresql.Driver", true, plugin)
                    .getDeclaredConstructor().newInstance();
            if (driver.getClass() == org.postgresql.Driver.class) {
                throw new IllegalStateException("the plugin loader gave the class path's pgjdbc");
            }
            Properties props = new Properties();
            props.setProperty("user", args[1]);
            props.setProperty("password", args[2]);
            try (Connection c = driver.connect(args[0], props)) {
                second = c.getClass().getName();
            }
        }
        System.out.println("RESULT first=" + first + " second=" + second);
    }

    /** Child first for org.postgresql, parent first for the rest. */
    private static final class PluginLoader extends URLClassLoader {
        PluginLoader(URL jar) {
            super(new URL[] {jar}, SecondPgjdbcService.class.getClassLoader());
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.startsWith("org.postgresql.")) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    c = findClass(name);
                }
                if (resolve) {
                    resolveClass(c);
                }
                return c;
            }
        }
    }
}
