package io.lockhygiene.agent;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.net.URL;
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
 * from: a service whose pgjdbc carries that very class file gets those bytes; any other pgjdbc (another
 * PGConnection, or one we cannot read, such as a jar nested in a Spring Boot jar) gets the subclass written
 * at run time as before. Equal class files declare equal methods, so the key is exact, not a guess from a
 * version number. Both files are read with {@link ZipFile}, not through the class loader's resource URLs
 * (which load the {@code jar:} URL machinery: some 4 ms cold against 0.5). The
 * build writes them with {@link PregenerateSubclass}.
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
        if (source == null) {
            return null;
        }
        long crc;
        long size;
        if (Files.isDirectory(source)) {
            byte[] bytes = Files.readAllBytes(source.resolve(PG_CONNECTION_CLASS));
            CRC32 c = new CRC32();
            c.update(bytes, 0, bytes.length);
            crc = c.getValue();
            size = bytes.length;
        } else {
            try (ZipFile jar = new ZipFile(source.toFile())) { // the class loader's open jar is shared, not reread
                ZipEntry e = jar.getEntry(PG_CONNECTION_CLASS);
                if (e == null || e.getCrc() < 0 || e.getSize() < 0) {
                    return null;
                }
                crc = e.getCrc();
                size = e.getSize();
            }
        }
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
