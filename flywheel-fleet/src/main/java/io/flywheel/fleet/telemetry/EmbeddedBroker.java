package io.flywheel.fleet.telemetry;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Properties;

import io.flywheel.error.StorageUnavailableException;
import io.moquette.BrokerConstants;
import io.moquette.broker.Server;
import io.moquette.broker.config.MemoryConfig;

/**
 * An MQTT broker inside the gateway's JVM (Moquette 0.17), for the one-machine default: robots publish to it and the
 * gateway's subscriber reads from it, with nothing to install. MQTT 3.1.1 only (Moquette 0.17 has no MQTT 5), plain
 * TCP, anonymous clients; sessions and queued messages live in memory, so they last as long as the gateway: a robot
 * whose QoS 1 or 2 message was not acknowledged when the gateway stopped publishes it again on reconnecting (its own
 * session), and the table's deduplication drops what was committed already. For brokers that outlive the gateway, run
 * mosquitto (or another broker) and pass its URL.
 */
public final class EmbeddedBroker implements AutoCloseable {
    /** The largest MQTT message the embedded broker takes, bytes; a larger one closes the robot's connection. */
    public static final int MAX_MESSAGE_BYTES = 256 << 10;
    private final Server server;
    private final String host;
    private final int port;

    private EmbeddedBroker(Server server, String host, int port) {
        this.server = server;
        this.host = host;
        this.port = port;
    }

    /**
     * @param host interface to listen on
     * @param port TCP port, 0 for a free one
     * @return the running broker, accepting connections
     * @throws io.flywheel.error.ConflictException when another process listens there
     * @throws StorageUnavailableException when it cannot listen there otherwise
     */
    public static EmbeddedBroker start(String host, int port) {
        int p = port;
        if (p == 0) {
            try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName(host))) {
                p = s.getLocalPort();
            } catch (IOException e) {
                throw new StorageUnavailableException("cannot find a free port on " + host + ": " + e.getMessage(), e);
            }
        }
        try (ServerSocket s = new ServerSocket()) { // taken by another process: say so before the broker tries
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(host, p));
        } catch (java.net.BindException e) {
            throw new io.flywheel.error.ConflictException("cannot listen on " + host + ":" + p + " for the embedded"
                    + " MQTT broker: " + e.getMessage() + " (another process listens there; --mqtt-port 0 picks a free"
                    + " port)", e);
        } catch (IOException e) {
            throw new StorageUnavailableException("cannot listen on " + host + ":" + p + ": " + e.getMessage(), e);
        }
        Properties props = new Properties();
        // MQTT messages up to 256 KiB (Moquette's default is 8,092 bytes, past which it drops the connection without a
        // word): the subscriber then refuses, logs and counts what its payload rules do not take
        props.setProperty(BrokerConstants.NETTY_MAX_BYTES_PROPERTY_NAME, Integer.toString(MAX_MESSAGE_BYTES));
        props.setProperty(BrokerConstants.HOST_PROPERTY_NAME, host);
        props.setProperty(BrokerConstants.PORT_PROPERTY_NAME, Integer.toString(p));
        props.setProperty(BrokerConstants.WEB_SOCKET_PORT_PROPERTY_NAME, BrokerConstants.DISABLED_PORT_BIND);
        props.setProperty(BrokerConstants.PERSISTENCE_ENABLED_PROPERTY_NAME, "false");
        props.setProperty(BrokerConstants.ALLOW_ANONYMOUS_PROPERTY_NAME, "true");
        props.setProperty(BrokerConstants.METRICS_ENABLE_PROPERTY_NAME, "false");
        props.setProperty(BrokerConstants.NETTY_EPOLL_PROPERTY_NAME, "false");
        Server server = new Server();
        try {
            server.startServer(new MemoryConfig(props));
        } catch (IOException | RuntimeException e) {
            server.stopServer();
            throw new StorageUnavailableException("cannot start the embedded MQTT broker on " + host + ":" + p + ": "
                    + e.getMessage(), e);
        }
        // the acceptor binds in the background: wait until it takes connections
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(host, p), 200);
                break;
            } catch (IOException e) {
                if (System.nanoTime() > deadline) {
                    server.stopServer();
                    throw new StorageUnavailableException("the embedded MQTT broker does not listen on " + host + ":"
                            + p + " (is the port taken?)");
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new StorageUnavailableException("interrupted while starting the embedded broker", ie);
                }
            }
        }
        return new EmbeddedBroker(server, host, p);
    }

    /** @return the TCP port it listens on */
    public int port() {
        return port;
    }

    /** @return {@code tcp://host:port}, as the subscriber and robots dial it */
    public String url() {
        return "tcp://" + host + ":" + port;
    }

    /** Stops the broker; its sessions are gone. */
    @Override
    public void close() {
        server.stopServer();
    }
}
