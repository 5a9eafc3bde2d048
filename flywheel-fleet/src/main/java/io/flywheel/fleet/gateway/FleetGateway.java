package io.flywheel.fleet.gateway;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

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
 * The fleet gateway: a gRPC server (plain-text HTTP/2, Netty) in front of one lake, serving {@code FleetGateway}
 * of {@code gateway.proto} (uploads: {@link UploadService}; live episodes: {@link LiveStreamService}) to robots
 * holding a token of the lake ({@link RobotTokens}, checked by {@link TokenInterceptor}).
 *
 * <p>{@link #close()} is the graceful shutdown: no new calls; calls in flight get {@link GatewayOptions#shutdownGrace()}
 * to finish and are then cut (their bytes stay staged, live episodes journaled; a gateway started later on the lake
 * resumes them); the ingest queue finishes the file it is reading, and the files still waiting are queued again by
 * the next gateway.
 */
public final class FleetGateway implements AutoCloseable {
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
     * @throws StorageUnavailableException when the port cannot be bound (naming host and port)
     * @throws io.flywheel.error.BadInputException when the lake's token property is damaged
     */
    public static FleetGateway start(Lake lake, GatewayOptions options) {
        TokenInterceptor auth = new TokenInterceptor(() -> RobotTokens.of(lake), options.tokenRefresh().toNanos());
        List<String> problems = new ArrayList<>();
        UploadService uploads = new UploadService(lake, options.limits(), options.ingest(), problems);
        LiveStreamService live = new LiveStreamService(uploads, options.limits());
        AtomicInteger n = new AtomicInteger();
        ThreadFactory tf = r -> {
            Thread t = new Thread(r, "flywheel-gateway-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        ExecutorService executor = Executors.newFixedThreadPool(options.threads(), tf);
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress(options.host(), options.port()))
                .executor(executor)
                .maxInboundMessageSize(options.limits().maxMessageBytes())
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
            throw new StorageUnavailableException("cannot listen on " + options.host() + ":" + options.port() + ": "
                    + e.getMessage(), e);
        }
        return new FleetGateway(server, executor, uploads, live, problems, options);
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
