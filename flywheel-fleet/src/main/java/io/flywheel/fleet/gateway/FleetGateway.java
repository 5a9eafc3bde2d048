package io.flywheel.fleet.gateway;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;



import io.flywheel.error.ConflictException;
import io.flywheel.error.StorageUnavailableException;
import io.flywheel.fleet.auth.RobotTokens;
import io.flywheel.fleet.auth.TokenInterceptor;
import io.flywheel.fleet.live.LiveStreamService;
import io.flywheel.fleet.upload.UploadService;
import io.flywheel.fleet.upload.UploadStats;
import io.flywheel.lake.Lake;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;

/**
 * The fleet gateway: a gRPC server (HTTP/2 over TLS with {@link GatewayOptions#tls()}, else plain text; Netty) in
 * front of one lake, serving {@code FleetGateway} of {@code gateway.proto} (uploads: {@link UploadService}; live
 * episodes: {@link LiveStreamService}) to robots holding a token of the lake ({@link RobotTokens}, checked by
 * {@link TokenInterceptor}).
 *
 * <p>{@link #close()} is the graceful shutdown: no new calls; calls in flight get {@link GatewayOptions#shutdownGrace()}
 * to finish and are then cut (their bytes stay staged, live episodes journaled; a gateway started later on the lake
 * resumes them); the ingest queue finishes the file it is reading, and the files still waiting are queued again by
 * the next gateway.
 */
public final class FleetGateway implements AutoCloseable {
    /**
     * grpc-netty logs a robot's connection dropped mid-stream as a WARNING with a stack trace ("Stream closed before
     * write could take place"); for a gateway that is a robot leaving Wi-Fi range, which the upload state already
     * handles (the bytes stay staged). Held here so that the level sticks (java.util.logging keeps loggers weakly).
     */
    private static final java.util.logging.Logger NETTY_STREAMS =
            java.util.logging.Logger.getLogger("io.grpc.netty.shaded.io.grpc.netty.NettyServerHandler");

    /**
     * grpc-netty logs a connection that does not speak HTTP/2 (a TLS client on a plain-text port, a port scanner) as
     * "Transport failed" with a stack trace at INFO; any stranger could fill the gateway's log that way.
     */
    private static final java.util.logging.Logger NETTY_TRANSPORTS =
            java.util.logging.Logger.getLogger("io.grpc.netty.shaded.io.grpc.netty.NettyServerTransport");

    static {
        NETTY_STREAMS.setLevel(java.util.logging.Level.SEVERE);
        NETTY_TRANSPORTS.setLevel(java.util.logging.Level.WARNING);
    }

    private final Server server;
    private final ExecutorService executor;
    private final UploadService uploads;
    private final LiveStreamService live;
    private final List<String> problems;
    private final GatewayOptions options;
    private boolean closed;

    private FleetGateway(Server server, ExecutorService executor, UploadService uploads, LiveStreamService live,
            List<String> problems, GatewayOptions options) {
        this.server = server;
        this.executor = executor;
        this.uploads = uploads;
        this.live = live;
        this.problems = problems;
        this.options = options;
    }

    /**
     * Starts a gateway.
     *
     * @param lake the lake (the caller keeps it open until after {@link #close()})
     * @param options where to listen, limits, ingest settings
     * @return the running gateway
     * @throws ConflictException when the port is taken (naming host and port)
     * @throws StorageUnavailableException when the server cannot start otherwise
     * @throws io.flywheel.error.BadInputException when the lake's token property is damaged
     */
    public static FleetGateway start(Lake lake, GatewayOptions options) {
        TokenInterceptor auth = new TokenInterceptor(() -> RobotTokens.of(lake), options.tokenRefresh().toNanos());
        List<String> problems = new ArrayList<>();
        UploadService uploads = new UploadService(lake, options.limits(), options.ingest(), problems, options.log(),
                options.spoolFor(lake.location()));
        LiveStreamService live = new LiveStreamService(uploads, options.limits());
        AtomicInteger n = new AtomicInteger();
        ThreadFactory tf = r -> {
            Thread t = new Thread(r, "flywheel-gateway-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        ExecutorService executor = Executors.newFixedThreadPool(options.threads(), tf);
        NettyServerBuilder sb = NettyServerBuilder.forAddress(new InetSocketAddress(options.host(), options.port()));
        if (options.tls() != null) {
            sb.sslContext(GatewayTls.sslContext(options.tls()));
        }
        Server server = sb.executor(executor)
                .maxInboundMessageSize(options.limits().maxMessageBytes())
                .flowControlWindow(options.limits().streamWindowBytes())
                .permitKeepAliveTime(10, TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(true)
                .addService(ServerInterceptors.intercept(new GatewayService(uploads, live), auth))
                .build();
        try {
            server.start();
        } catch (IOException e) {
            live.close();
            uploads.close();
            executor.shutdownNow();
            String where = options.host() + ":" + options.port();
            // another process holds the port, or the host is not ours (Netty's epoll transport throws its own IOException)
            if (hasCause(e, BindException.class) || rootMessage(e).contains("Address already in use")) {
                throw new ConflictException("cannot listen on " + where + ": " + rootMessage(e)
                        + " (another process listens there, or the host is not an interface of this machine;"
                        + " --grpc-port 0 picks a free port)", e);
            }
            throw new StorageUnavailableException("cannot listen on " + where + ": " + rootMessage(e), e);
        }
        return new FleetGateway(server, executor, uploads, live, problems, options);
    }

    private static boolean hasCause(Throwable t, Class<? extends Throwable> c) {
        for (; t != null; t = t.getCause()) {
            if (c.isInstance(t)) {
                return true;
            }
        }
        return false;
    }

    private static String rootMessage(Throwable t) {
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t.getMessage();
    }

    /** @return the TCP port it listens on */
    public int port() {
        return server.getPort();
    }

    /** @return {@code host:port} as a client dials it */
    public String target() {
        return options.host() + ":" + port();
    }

    /** @return the upload counts so far */
    public UploadStats stats() {
        return uploads.stats();
    }

    /** @return the live episode counts so far */
    public LiveStreamService.Stats liveStats() {
        return live.stats();
    }

    /** @return one line per state file found in the staging folder at start that could not be read */
    public List<String> problems() {
        return List.copyOf(problems);
    }

    /** Stops serving (see the class comment); blocks until the calls and the ingest in flight are over. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        server.shutdown();
        try {
            if (!server.awaitTermination(options.shutdownGrace().toMillis(), TimeUnit.MILLISECONDS)) {
                uploads.stopStreams();
                live.stopStreams();
                server.shutdownNow();
                server.awaitTermination(10, TimeUnit.SECONDS);
            }
            executor.shutdown();
            executor.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            live.close();
            uploads.close();
        }
    }
}
