package io.lockhygiene.agent;

import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Build time only (the agent module's {@code process-classes} phase): writes {@link PregeneratedSubclass}'s
 * class file for the pgjdbc on the build's class path. Public for the exec plugin; no service calls it.
 */
public final class PregenerateSubclass {
    private PregenerateSubclass() {
    }

    /** The class file for this PGConnection, its forwards in a fixed order (a build gives the same bytes twice). */
    static byte[] write(Class<?> pgInterface) {
        List<Method> forwards = new ArrayList<>(PgConnectionSubclass.forwards(pgInterface));
        forwards.sort(Comparator.comparing(m -> m.getName() + ForwardingClass.descriptor(m.getParameterTypes(), m.getReturnType())));
        return PgConnectionSubclass.write(pgInterface, forwards);
    }

    /**
     * Build time (the agent module's {@code process-classes}): writes the subclass for the pgjdbc on the
     * build's class path into the class directory given, under its key. Args: CLASS_DIRECTORY.
     */
    public static void main(String[] args) throws Exception {
        Class<?> pgInterface = Class.forName("org.postgresql.PGConnection");
        String key = PregeneratedSubclass.key(pgInterface);
        if (key == null) {
            throw new IllegalStateException("cannot read " + PregeneratedSubclass.PG_CONNECTION_CLASS + " of the build's pgjdbc");
        }
        Path out = Paths.get(args[0]).resolve(PregeneratedSubclass.FOLDER + key);
        Files.createDirectories(out.getParent());
        Files.write(out, write(pgInterface));
        System.out.println("[lockhygiene] pregenerated the PGConnection subclass: " + out);
    }
}
