package io.lockhygiene.agent;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The build edited the Driver and pool classes of the pgjdbc, HikariCP and DBCP2 on this class path, and each
 * edit is byte for byte what the transformer makes at load (a stale or different file fails here); any other
 * class file of the same class finds none.
 */
class PregeneratedTest {

    @ParameterizedTest
    @ValueSource(strings = {PgjdbcTransformer.DRIVER, PgjdbcTransformer.HIKARI, PgjdbcTransformer.DBCP2})
    void theBuildsEditIsTheEditAtLoad(String className) throws Exception {
        byte[] original = Pregenerate.classFile(className);
        assertNotNull(original, className + " is on the test class path");
        byte[] pregenerated = Pregenerated.edited(className, original);
        assertNotNull(pregenerated, "no pregenerated edit of " + className);
        assertArrayEquals(PgjdbcTransformer.wrapAtLoad(className, original), pregenerated);
    }

    @ParameterizedTest
    @ValueSource(strings = {PgjdbcTransformer.DRIVER, PgjdbcTransformer.HIKARI, PgjdbcTransformer.DBCP2})
    void anotherClassFileOfTheSameClassHasNone(String className) throws Exception {
        byte[] changed = Pregenerate.classFile(className).clone();
        changed[changed.length - 1] ^= 1; // one bit of the last attribute: another class file
        assertNull(Pregenerated.edited(className, changed));
    }
}
