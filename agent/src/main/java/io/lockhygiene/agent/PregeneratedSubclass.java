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
 * The PGConnection subclass's class file written at build time, for a first connection that should not pay
 * for writing it (reflection over PGConnection and the writing itself: about 10 ms of a cold JVM's main
 * thread). It is keyed by the CRC-32 and size of the {@code org/postgresql/PGConnection.class} it was made
 * from: a service whose pgjdbc carries that very class file gets those bytes, wherever the jar is (a local
 * jar or directory, or a jar nested in a Spring Boot jar); any other PGConnection gets the subclass written
 * at run time as before. Equal class files declare equal methods, so the key is exact, not a guess from a
 * version number. Local jars are read with {@link ZipFile}, not through the class loader's resource URLs
 * (which load the {@code jar:} URL machinery: some 4 ms cold against 0.5); a nested jar through its URL (its
 * loader has that machinery running already). The build writes the files with {@link PregenerateSubclass}.
 */
final class PregeneratedSubclass {
    static final String PG_CONNECTION_CLASS = "org/postgresql/PGConnection.class";
    static final String FOLDER = "io/lockhygiene/agent/generated/";

    private PregeneratedSubclass() {
    }

    /** The build-time class file for this PGConnection, or null when there is none for it (or it cannot be read). */
    static byte[] lookUp(Class<?> pgInterface) {
        try {
            String key = key(pgInterface);
            return key == null ? null : read(PregeneratedSubclass.class, FOLDER + key);
        } catch (IOException | RuntimeException e) {
            return null; // written at run time instead
        }
    }

    /** {@code PGConnection-<crc32 hex>-<size>.bin} of the class file this interface was loaded from, or null. */
    static String key(Class<?> pgInterface) throws IOException {
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

    private static String keyOf(byte[] classFile) {
        CRC32 crc = new CRC32();
        crc.update(classFile, 0, classFile.length);
        return keyOf(crc.getValue(), classFile.length);
    }

    private static String keyOf(long crc, long size) {
        return "PGConnection-" + Long.toHexString(crc) + "-" + size + ".bin";
    }

    /** A file beside {@code owner}'s classes (in its jar or class directory), or null. */
    private static byte[] read(Class<?> owner, String name) throws IOException {
        Path source = sourceOf(owner);
        if (source == null) {
            return null;
        }
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
