package io.lockhygiene.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The agent jar that this jar carries as a resource, written out once for {@code attach}: the target JVM
 * opens the file by path and keeps it open, so it lives in the temporary directory under a name made of
 * its content's hash (a second attach, or a newer version, finds its own file; nothing is overwritten).
 */
final class EmbeddedAgent {
    static final String RESOURCE = "/META-INF/lockhygiene/lockhygiene-agent.jar";

    private EmbeddedAgent() {
    }

    static Path extract() throws IOException {
        byte[] bytes;
        try (InputStream in = EmbeddedAgent.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IOException("this build carries no agent jar (" + RESOURCE + ")");
            }
            bytes = in.readAllBytes();
        }
        Path target = Paths.get(System.getProperty("java.io.tmpdir"), "lockhygiene-agent-" + hash(bytes) + ".jar");
        if (Files.isRegularFile(target) && Files.size(target) == bytes.length) {
            return target;
        }
        Path partial = Files.createTempFile(target.getParent(), "lockhygiene-agent-", ".part");
        try {
            Files.write(partial, bytes);
            Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(partial);
        }
        return target;
    }

    private static String hash(byte[] bytes) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(bytes);
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < 8; i++) {
                sb.append(String.format("%02x", d[i]));
            }
            return sb.toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e); // every Java has SHA-256
        }
    }
}
