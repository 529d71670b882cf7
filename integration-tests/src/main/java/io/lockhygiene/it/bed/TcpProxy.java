package io.lockhygiene.it.bed;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A loopback TCP forwarder whose traffic can be stopped: {@link #blackhole(boolean)} makes the port stop
 * answering (bytes are no longer passed on, connections stay open), as a network that goes away does. It
 * also counts the round trips clients start ({@link #roundTrips()}): PostgreSQL frontend messages that ask
 * the server to answer (a simple Query, or the Sync that ends an extended-protocol exchange).
 */
public final class TcpProxy implements AutoCloseable {
    private final ServerSocket server;
    private final int targetPort;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean blackholed;
    private volatile boolean closed;
    private final long delayNanos;
    private final java.util.concurrent.atomic.AtomicLong roundTrips = new java.util.concurrent.atomic.AtomicLong();

    public TcpProxy(int targetPort) throws IOException {
        this(targetPort, 0);
    }

    /**
     * @param delayMicros each chunk of bytes waits this long before it is passed on, both ways: a network
     *                    between client and server (a round trip costs twice this more) for the benchmarks
     */
    public TcpProxy(int targetPort, long delayMicros) throws IOException {
        this.targetPort = targetPort;
        this.delayNanos = delayMicros * 1000;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(this::acceptLoop, "tcp-proxy-accept");
        accept.setDaemon(true);
        accept.start();
    }

    public int port() {
        return server.getLocalPort();
    }

    /** The port a JDBC URL ({@code jdbc:...://host:port/...}) names. */
    public static int portOf(String jdbcUrl) {
        return Integer.parseInt(jdbcUrl.replaceFirst("^[^/]*//[^:/]+:(\\d+)/.*$", "$1"));
    }

    /** {@code jdbcUrl}, a URL of the proxied server, through this proxy instead (its port in the server's place). */
    public String via(String jdbcUrl) {
        return jdbcUrl.replaceFirst("^([^/]*//[^:/]+:)\\d+/", "$1" + port() + "/");
    }

    public void blackhole(boolean on) {
        blackholed = on;
    }

    /** Query and Sync messages clients have sent through this proxy so far (each is one round trip). */
    public long roundTrips() {
        return roundTrips.get();
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(upstream);
                pump(client, upstream, new FrontendCounter());
                pump(upstream, client, null);
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    private void pump(Socket from, Socket to, FrontendCounter counter) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[8192];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    while (blackholed && !closed) {
                        Thread.sleep(20); // hold the bytes: nothing answers
                    }
                    if (counter != null) {
                        counter.feed(buf, n);
                    }
                    if (delayNanos > 0) {
                        java.util.concurrent.locks.LockSupport.parkNanos(delayNanos);
                    }
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // the other side went away
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "tcp-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    /**
     * Follows one client's byte stream message by message: untyped start-up packets first (an SSL or GSS
     * request is followed by another), then typed messages (a type byte and a length that counts itself).
     */
    private final class FrontendCounter {
        private static final int SSL_REQUEST = 80877103;
        private static final int GSS_REQUEST = 80877104;
        private boolean startup = true;
        private final byte[] header = new byte[8];
        private int headerFill;
        private long skip;

        void feed(byte[] buf, int n) {
            int i = 0;
            while (i < n) {
                if (skip > 0) {
                    int k = (int) Math.min(skip, n - i);
                    skip -= k;
                    i += k;
                    continue;
                }
                int need = startup ? 8 : 5;
                while (headerFill < need && i < n) {
                    header[headerFill++] = buf[i++];
                }
                if (headerFill < need) {
                    return;
                }
                headerFill = 0;
                if (startup) {
                    int len = readInt(0);
                    int code = readInt(4);
                    skip = len - 8L;
                    startup = code == SSL_REQUEST || code == GSS_REQUEST;
                } else {
                    char type = (char) header[0];
                    if (type == 'Q' || type == 'S') {
                        roundTrips.incrementAndGet();
                    }
                    skip = readInt(1) - 4L;
                }
            }
        }

        private int readInt(int at) {
            return ((header[at] & 0xff) << 24) | ((header[at + 1] & 0xff) << 16) | ((header[at + 2] & 0xff) << 8)
                    | (header[at + 3] & 0xff);
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        server.close();
        for (Socket s : sockets) {
            closeQuietly(s);
        }
    }
}
