package io.flywheel.fleet.sim;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import io.flywheel.error.StorageUnavailableException;

/**
 * A robot's network link to one server, as a TCP relay on loopback that can be cut: the robot dials
 * {@link #target()}, each connection is relayed byte for byte to the server, and {@link #cutAfter} or {@link #cutNow}
 * closes every relayed connection at once, both ways, without a word to either side (no TLS close, no MQTT
 * DISCONNECT, no HTTP/2 GOAWAY): what a robot driving out of Wi-Fi range does to its connections. The next connection
 * the robot opens is relayed again.
 *
 * <p>Two threads per connection (one per direction), blocking I/O; meant for a simulated fleet on one machine, not
 * for traffic between machines.
 */
public final class CuttableLink implements AutoCloseable {
    private final String serverHost;
    private final int serverPort;
    private final ServerSocket listener;
    private final Thread acceptor;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final AtomicLong upstreamBytes = new AtomicLong();
    private final AtomicLong cuts = new AtomicLong();
    private final Object cutLock = new Object();
    private long cutAt = -1;
    private boolean cutAtReply;
    private volatile boolean closed;

    private CuttableLink(String serverHost, int serverPort, ServerSocket listener, String name) {
        this.serverHost = serverHost;
        this.serverPort = serverPort;
        this.listener = listener;
        this.acceptor = new Thread(this::accept, name);
        acceptor.setDaemon(true);
    }

    /**
     * @param serverHost where the relayed connections go
     * @param serverPort its port
     * @param name names the relay's threads, e.g. {@code robot_01-grpc}
     * @return the link, listening on a free loopback port
     * @throws StorageUnavailableException when no port can be bound
     */
    public static CuttableLink start(String serverHost, int serverPort, String name) {
        ServerSocket s;
        try {
            s = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new StorageUnavailableException("cannot open a loopback port for " + name + ": " + e.getMessage(), e);
        }
        CuttableLink link = new CuttableLink(serverHost, serverPort, s, name);
        link.acceptor.start();
        return link;
    }

    /** @return {@code 127.0.0.1:port}, what the robot dials instead of the server */
    public String target() {
        return listener.getInetAddress().getHostAddress() + ":" + listener.getLocalPort();
    }

    /** @return the loopback port the robot dials */
    public int port() {
        return listener.getLocalPort();
    }

    /**
     * Arms a cut: once {@code bytes} more bytes have gone from the robot to the server, every connection is cut (one
     * cut; arming again replaces it).
     *
     * @param bytes bytes still to pass, &ge; 0
     */
    public void cutAfter(long bytes) {
        synchronized (cutLock) {
            cutAt = upstreamBytes.get() + Math.max(0, bytes);
        }
    }

    /**
     * Arms a cut at the server's next reply: the next bytes the server sends the robot are dropped and every
     * connection is cut instead. Cutting there, rather than after the robot's bytes, is certain the server read and
     * acted on what the robot sent (e.g. an MQTT broker sends PUBACK only once it took the PUBLISH), where a reset
     * right behind the robot's bytes may discard them unread in the server's socket.
     */
    public void cutBeforeNextReply() {
        synchronized (cutLock) {
            cutAtReply = true;
        }
    }

    /** Disarms a cut {@link #cutAfter} or {@link #cutBeforeNextReply} armed that has not happened. */
    public void disarm() {
        synchronized (cutLock) {
            cutAt = -1;
            cutAtReply = false;
        }
    }

    /** Cuts every connection now (counted as a cut when there was one to cut). */
    public void cutNow() {
        synchronized (cutLock) {
            cutAt = -1;
            cutAtReply = false;
            cutLocked();
        }
    }

    /** @return cuts made so far (a cut with no connection open is not one) */
    public long cuts() {
        return cuts.get();
    }

    /** @return bytes relayed from the robot to the server so far */
    public long upstreamBytes() {
        return upstreamBytes.get();
    }

    private void cutLocked() {
        boolean any = false;
        for (Socket s : open) {
            any = true;
            try {
                s.setSoLinger(true, 0); // a reset, not an orderly close: the peer learns nothing more
            } catch (IOException ignored) {
                // closed already
            }
            closeQuietly(s);
        }
        open.clear();
        if (any) {
            cuts.incrementAndGet();
        }
    }

    private void accept() {
        while (!closed) {
            Socket robot;
            try {
                robot = listener.accept();
            } catch (IOException e) {
                return; // closed
            }
            Socket server = new Socket();
            try {
                robot.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                server.connect(new InetSocketAddress(serverHost, serverPort), 5_000);
            } catch (IOException e) {
                closeQuietly(robot);
                closeQuietly(server);
                continue; // the robot sees its connection refused, as it would without the relay
            }
            open.add(robot);
            open.add(server);
            String name = acceptor.getName();
            start(name + "-up", () -> pump(robot, server, true));
            start(name + "-down", () -> pump(server, robot, false));
        }
    }

    private static void start(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    private void pump(Socket from, Socket to, boolean upstream) {
        byte[] buf = new byte[64 * 1024];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            for (int n; (n = in.read(buf)) > 0; ) {
                int pass = n;
                boolean cut = false;
                synchronized (cutLock) {
                    if (upstream) {
                        long before = upstreamBytes.get();
                        if (cutAt >= 0 && before + n >= cutAt) {
                            pass = (int) Math.max(0, cutAt - before);
                            cut = true;
                        }
                        upstreamBytes.addAndGet(pass);
                    } else if (cutAtReply) {
                        pass = 0;
                        cut = true;
                    }
                }
                if (pass > 0) {
                    out.write(buf, 0, pass);
                    out.flush();
                }
                if (cut) {
                    synchronized (cutLock) {
                        cutAt = -1;
                        cutAtReply = false;
                        cutLocked();
                    }
                    return;
                }
            }
        } catch (IOException e) {
            // the other side closed, or the link was cut
        } finally {
            closeQuietly(from);
            closeQuietly(to);
            open.remove(from);
            open.remove(to);
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    /** Stops listening and closes every connection (not counted as a cut). */
    @Override
    public void close() {
        closed = true;
        try {
            listener.close();
        } catch (IOException ignored) {
            // closing
        }
        for (Socket s : open) {
            closeQuietly(s);
        }
        open.clear();
    }
}
