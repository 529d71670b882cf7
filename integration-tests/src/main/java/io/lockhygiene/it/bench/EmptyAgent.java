package io.lockhygiene.it.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.instrument.Instrumentation;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

/**
 * An agent that does nothing: what the JVM itself charges for any {@code -javaagent} (with an agent the
 * JVM cannot use its archived module graph and builds it at start-up), the floor under our own figure.
 */
public final class EmptyAgent {
    private EmptyAgent() {
    }

    public static void premain(String args, Instrumentation inst) {
        // nothing: the point is what the JVM does around it
    }

    /** Writes a jar holding only this class, with it as Premain-Class. */
    static Path writeJar(Path dir) throws IOException {
        Manifest m = new Manifest();
        m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        m.getMainAttributes().put(new Attributes.Name("Premain-Class"), EmptyAgent.class.getName());
        Path jar = dir.resolve("empty-agent.jar");
        String entry = EmptyAgent.class.getName().replace('.', '/') + ".class";
        try (OutputStream file = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(file, m);
             InputStream in = EmptyAgent.class.getClassLoader().getResourceAsStream(entry)) {
            out.putNextEntry(new JarEntry(entry));
            in.transferTo(out);
            out.closeEntry();
        }
        return jar;
    }
}
