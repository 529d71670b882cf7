package io.lockhygiene.internal.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Properties;
import java.util.logging.Logger;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/** What a DataSource's public API tells the lock holder, exactly; never a password in a message. */
class PoolConfigTest {

    /** A DataSource that shows nothing (the base of the fakes below). */
    public static class Silent implements DataSource {
        @Override
        public Connection getConnection() throws SQLException {
            throw new SQLException("not here");
        }

        @Override
        public Connection getConnection(String u, String p) throws SQLException {
            throw new SQLException("not here");
        }

        @Override
        public PrintWriter getLogWriter() {
            return null;
        }

        @Override
        public void setLogWriter(PrintWriter out) {
        }

        @Override
        public void setLoginTimeout(int seconds) {
        }

        @Override
        public int getLoginTimeout() {
            return 0;
        }

        @Override
        public Logger getParentLogger() {
            return Logger.getGlobal();
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            throw new SQLException("no");
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) {
            return false;
        }
    }

    /** HikariCP's getter names. */
    public static class HikariLike extends Silent {
        public String getJdbcUrl() {
            return "jdbc:postgresql://db:6432/app?prepareThreshold=0";
        }

        public String getUsername() {
            return "app";
        }

        public String getPassword() {
            return "s3cret";
        }

        public Properties getDataSourceProperties() {
            Properties p = new Properties();
            p.setProperty("sslmode", "require");
            return p;
        }
    }

    /** DBCP2's: getUrl. */
    public static class Dbcp2Like extends Silent {
        public String getUrl() {
            return "jdbc:postgresql://db/app";
        }

        public String getUsername() {
            return "app";
        }

        public String getPassword() {
            return "pw";
        }
    }

    /** The same getters declared on a type that is not public: not its public API, so not read. */
    static class Hidden extends Silent {
        public String getJdbcUrl() {
            return "jdbc:postgresql://db/app";
        }

        public String getUsername() {
            return "app";
        }
    }

    /** A URL of another driver, and a getter that throws. */
    public static class Other extends Silent {
        public String getJdbcUrl() {
            return "jdbc:mysql://db/app";
        }

        public String getUrl() {
            throw new IllegalStateException("closed");
        }
    }

    /** HikariCP 6+: a credentials provider wins over getUsername/getPassword. */
    public static class WithProvider extends HikariLike {
        public Object getCredentialsProvider() {
            return new Provider();
        }
    }

    public static class Provider {
        public Object getCredentials() {
            return new Credentials();
        }
    }

    public static class Credentials {
        public String getUsername() {
            return "rotated";
        }

        public String getPassword() {
            return "fresh";
        }
    }

    @Test
    void hikariGettersAndItsDataSourceProperties() {
        List<ConnectRecipe> r = PoolConfig.of(new HikariLike());
        assertEquals(1, r.size());
        assertEquals("jdbc:postgresql://db:6432/app?prepareThreshold=0", r.get(0).url());
        Properties p = r.get(0).properties();
        assertEquals("app", p.getProperty("user"));
        assertEquals("s3cret", p.getProperty("password"));
        assertEquals("require", p.getProperty("sslmode"));
        assertEquals("HikariLike's getters", r.get(0).source());
        assertTrue(r.get(0).hasPassword());
        assertFalse(r.get(0).toString().contains("s3cret"), r.get(0).toString());
        assertEquals("jdbc:postgresql://db:6432/app?prepareThreshold=0 (user app, from HikariLike's getters)",
                r.get(0).toString());
    }

    @Test
    void dbcp2GetUrl() {
        List<ConnectRecipe> r = PoolConfig.of(new Dbcp2Like());
        assertEquals(1, r.size());
        assertEquals("jdbc:postgresql://db/app", r.get(0).url());
        assertEquals("pw", r.get(0).properties().getProperty("password"));
    }

    @Test
    void aCredentialsProviderWins() {
        Properties p = PoolConfig.of(new WithProvider()).get(0).properties();
        assertEquals("rotated", p.getProperty("user"));
        assertEquals("fresh", p.getProperty("password"));
    }

    @Test
    void nothingFromANonPublicTypeAnotherDriverOrASilentOne() {
        assertEquals(0, PoolConfig.of(new Hidden()).size(), "a non-public class's methods are not its public API");
        assertEquals(0, PoolConfig.of(new Other()).size(), "jdbc:mysql is not ours; a getter that throws is skipped");
        assertEquals(0, PoolConfig.of(new Silent()).size());
    }

    @Test
    void pgjdbcsOwnDataSourceByItsUrlUserAndPassword() {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setServerNames(new String[] {"db1"});
        ds.setPortNumbers(new int[] {6432});
        ds.setDatabaseName("app");
        ds.setUser("u");
        ds.setPassword("p@ss");
        ds.setPrepareThreshold(0);
        List<ConnectRecipe> r = PoolConfig.of(ds);
        assertEquals("jdbc:postgresql://db1:6432/app?prepareThreshold=0", r.get(0).url());
        assertEquals("u", r.get(0).properties().getProperty("user"));
        assertEquals("p@ss", r.get(0).properties().getProperty("password"));
        assertEquals("pgjdbc's PGSimpleDataSource", r.get(0).source());
        assertEquals(1, r.size(), "its bean getters would say the same again");
    }

    @Test
    void aPasswordInTheUrlCountsAndIsRedacted() {
        ConnectRecipe r = new ConnectRecipe("jdbc:postgresql://db/app?user=a&password=topsecret", new Properties(), "x");
        assertTrue(r.hasPassword());
        assertFalse(r.toString().contains("topsecret"), r.toString());
        assertFalse(new ConnectRecipe("jdbc:postgresql://db/app", new Properties(), "x").hasPassword());
    }
}
