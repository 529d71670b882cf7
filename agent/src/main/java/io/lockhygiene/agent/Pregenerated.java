package io.lockhygiene.agent;

import java.io.IOException;
import java.io.InputStream;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLConnection;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.CodeSource;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * Class files the build made for the pgjdbc, HikariCP and DBCP2 it compiles and tests against, so that a
 * service's start-up does not make them: the forwarding PGConnection subclass (reflection over PGConnection
 * and writing the class: about 10 ms of a cold JVM's main thread) and the edited {@code Driver} and pool
 * classes ({@link MethodWrap} and its class-file reader: a few ms). Each is keyed by the CRC-32 and size of
 * the class file it was made from, so it is used exactly when the service has that very class file (equal
 * class files, equal methods: not a guess from a version number); anything else is made at run time as
 * before. The service's class files are read from the jar's central directory with {@link ZipFile} (or
 * through the class loader's jar URL for a jar nested in a Spring Boot jar), ours from the agent jar the
 * same way, not through the class loader's resource URLs (the {@code jar:} URL machinery costs some 4 ms
 * cold against 0.5). The build writes the files with {@link Pregenerate}.
 */
final class Pregenerated {
    static final String PG_CONNECTION_CLASS = "org/postgresql/PGConnection.class";
    static final String FOLDER = "io/lockhygiene/agent/generated/";

    private Pregenerated() {
    }

    /** The build-time subclass for this PGConnection, or null when there is none for it (or it cannot be read). */
    static byte[] subclass(Class<?> pgInterface) {
        try {
            String key = subclassKey(pgInterface);
            return key == null ? null : ours(key);
        } catch (IOException | RuntimeException e) {
            return null; // written at run time instead
        }
    }

    /** The build-time edit of this class file ({@code className} internal), or null when the build saw another. */
    static byte[] edited(String className, byte[] original) {
        try {
            return ours(editedKey(className, keyOf(original)));
        } catch (IOException | RuntimeException e) {
            return null; // edited at run time instead
        }
    }

    static String editedKey(String className, String classFileKey) {
        return className.replace('/', '.') + "-" + classFileKey;
    }

    /** {@code PGConnection-<crc32 hex>-<size>.bin} of the class file this interface was loaded from, or null. */
    static String subclassKey(Class<?> pgInterface) throws IOException {
        String key = keyOfClassFile(pgInterface);
        return key == null ? null : "PGConnection-" + key;
    }

    private static String keyOfClassFile(Class<?> pgInterface) throws IOException {
        Path source = sourceOf(pgInterface);
        if (source == null) { // a nested jar (Spring Boot), for one
            CodeSource cs = pgInterface.getProtectionDomain().getCodeSource();
            return cs == null ? null : keyFromResource(pgInterface.getClassLoader(), cs.getLocation());
        }
        if (Files.isDirectory(source)) {
            return keyOf(Files.readAllBytes(source.resolve(PG_CONNECTION_CLASS)));
        }
        try (ZipFile jar = new ZipFile(source.toFile())) { // the class loader's open jar is shared, not reread
            ZipEntry e = jar.getEntry(PG_CONNECTION_CLASS);
            return e == null ? null : keyOf(e);
        }
    }

    /**
     * The key through the class loader's resource URL, for class files that are not in a local jar or
     * directory: a jar connection (Spring Boot's nested jars have one) gives the entry's CRC without reading
     * it; anything else is read. Only a resource under {@code location} (where the interface was loaded from)
     * counts: a loader that asks its parent first could find another pgjdbc's copy.
     */
    static String keyFromResource(ClassLoader loader, URL location) throws IOException {
        URL url = loader == null ? ClassLoader.getSystemResource(PG_CONNECTION_CLASS) : loader.getResource(PG_CONNECTION_CLASS);
        if (url == null || location == null || !url.toString().startsWith(location.toString())) {
            return null;
        }
        URLConnection connection = url.openConnection();
        if (connection instanceof JarURLConnection) {
            JarURLConnection jar = (JarURLConnection) connection;
            try {
                ZipEntry e = jar.getJarEntry();
                String key = e == null ? null : keyOf(e);
                if (key != null) {
                    return key;
                }
            } finally {
                if (!jar.getUseCaches()) {
                    jar.getJarFile().close(); // not the cache's shared one: ours to close
                }
            }
        }
        try (InputStream in = url.openStream()) {
            return keyOf(in.readAllBytes());
        }
    }

    private static String keyOf(ZipEntry e) {
        return e.getCrc() < 0 || e.getSize() < 0 ? null : keyOf(e.getCrc(), e.getSize());
    }

    static String keyOf(byte[] classFile) {
        CRC32 crc = new CRC32();
        crc.update(classFile, 0, classFile.length);
        return keyOf(crc.getValue(), classFile.length);
    }

    private static String keyOf(long crc, long size) {
        return Long.toHexString(crc) + "-" + size + ".bin";
    }

    /** A file the build put beside our classes (in the agent jar or class directory), or null. */
    private static byte[] ours(String key) throws IOException {
        Path source = sourceOf(Pregenerated.class);
        if (source == null) {
            return null;
        }
        String name = FOLDER + key;
        if (Files.isDirectory(source)) {
            Path file = source.resolve(name);
            return Files.isRegularFile(file) ? Files.readAllBytes(file) : null;
        }
        try (ZipFile jar = new ZipFile(source.toFile())) {
            ZipEntry e = jar.getEntry(name);
            if (e == null) {
                return null;
            }
            try (InputStream in = jar.getInputStream(e)) {
                return in.readAllBytes();
            }
        }
    }

    /** The local jar file or class directory a class came from; null for anything else (nested jars, jrt:). */
    private static Path sourceOf(Class<?> type) {
        CodeSource cs = type.getProtectionDomain().getCodeSource();
        URL location = cs == null ? null : cs.getLocation();
        if (location == null || !"file".equals(location.getProtocol())) {
            return null;
        }
        try {
            Path p = Paths.get(location.toURI());
            return Files.exists(p) ? p : null;
        } catch (URISyntaxException | IllegalArgumentException e) {
            return null;
        }
    }
}
