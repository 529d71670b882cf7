package io.lockhygiene.agent;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Build time only (the agent module's {@code process-classes} phase; not in the agent jar): writes
 * {@link Pregenerated}'s class files for the pgjdbc, HikariCP and DBCP2 on the build's class path (a library
 * missing there is skipped). Public for the exec plugin. Args: CLASS_DIRECTORY.
 */
public final class Pregenerate {
    private Pregenerate() {
    }

    public static void main(String[] args) throws Exception {
        Path folder = Paths.get(args[0]).resolve(Pregenerated.FOLDER);
        Files.createDirectories(folder);
        Class<?> pgInterface = Class.forName("org.postgresql.PGConnection");
        String key = Pregenerated.subclassKey(pgInterface);
        if (key == null) {
            throw new IllegalStateException("cannot read " + Pregenerated.PG_CONNECTION_CLASS + " of the build's pgjdbc");
        }
        write(folder.resolve(key), subclass(pgInterface));
        for (String target : PgjdbcTransformer.TARGETS) {
            byte[] original = classFile(target);
            if (original != null) {
                write(folder.resolve(Pregenerated.editedKey(target, Pregenerated.keyOf(original))),
                        PgjdbcTransformer.wrapAtLoad(target, original));
            }
        }
    }

    /** The subclass for this PGConnection, its forwards in a fixed order (a build gives the same bytes twice). */
    static byte[] subclass(Class<?> pgInterface) {
        List<Method> forwards = new ArrayList<>(PgConnectionSubclass.forwards(pgInterface));
        forwards.sort(Comparator.comparing(m -> m.getName() + ForwardingClass.descriptor(m.getParameterTypes(), m.getReturnType())));
        return PgConnectionSubclass.write(pgInterface, forwards);
    }

    /** The class file of {@code internalName} on the build's class path, or null. */
    static byte[] classFile(String internalName) throws IOException {
        try (InputStream in = Pregenerate.class.getClassLoader().getResourceAsStream(internalName + ".class")) {
            return in == null ? null : in.readAllBytes();
        }
    }

    private static void write(Path file, byte[] bytes) throws IOException {
        Files.write(file, bytes);
        System.out.println("[lockhygiene] pregenerated " + file.getFileName());
    }
}
