package io.flywheel.fleet.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import com.google.protobuf.ByteString;

import io.flywheel.fleet.v1.Begin;
import io.flywheel.fleet.v1.Chunk;
import io.flywheel.fleet.v1.End;
import io.flywheel.fleet.v1.FleetGatewayGrpc;
import io.flywheel.fleet.v1.UploadAck;
import io.flywheel.fleet.v1.UploadRequest;
import io.flywheel.fleet.v1.UploadState;
import io.flywheel.fleet.v1.UploadStatus;
import io.flywheel.fleet.v1.UploadStatusRequest;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.MetadataUtils;

/**
 * The robot-side client of a fleet gateway ({@code gateway.proto}): uploads files, asks for their state and streams
 * live episodes ({@link #openEpisode}). One client holds one HTTP/2 connection (plain text) and may be shared by
 * threads uploading different files and streaming different episodes.
 *
 * <p>{@link #upload} hashes the file, opens an {@code UploadEpisode} stream and sends BEGIN, then the bytes from the
 * offset the gateway names (so a file partly staged by an earlier try continues there), at most
 * {@link Builder#window} chunks ahead of the gateway's acknowledgements, then END. When an attempt fails with a status
 * worth retrying (UNAVAILABLE, ABORTED, CANCELLED, DEADLINE_EXCEEDED, or no acknowledgement within
 * {@link Builder#idleTimeout}), it waits (exponential backoff with jitter), asks {@code GetUploadStatus} and continues
 * from the acknowledged offset; any other status ends the upload with an {@link UploadFailedException}.
 */
public final class FleetClient implements AutoCloseable {
    private static final Set<Status.Code> RETRY = EnumSet.of(Status.Code.UNAVAILABLE, Status.Code.ABORTED,
            Status.Code.CANCELLED, Status.Code.DEADLINE_EXCEEDED);
    private static final Object COMPLETED = new Object();

    private final ManagedChannel channel;
    private final FleetGatewayGrpc.FleetGatewayStub async;
    private final FleetGatewayGrpc.FleetGatewayBlockingStub blocking;
    private final Builder o;

    private FleetClient(Builder b) {
        this.o = b;
        Metadata headers = new Metadata();
        headers.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + b.token);
        NettyChannelBuilder cb = NettyChannelBuilder.forTarget(b.target);
        if (b.tls == null) {
            cb.usePlaintext();
        } else {
            try {
                SslContextBuilder ssl = GrpcSslContexts.forClient();
                if (b.tls.trustCerts() != null) {
                    ssl.trustManager(b.tls.trustCerts().toFile());
                }
                if (b.tls.certChain() != null) {
                    ssl.keyManager(b.tls.certChain().toFile(), b.tls.privateKey().toFile());
                }
                cb.sslContext(ssl.build());
            } catch (javax.net.ssl.SSLException | IllegalArgumentException e) {
                throw new io.flywheel.error.BadInputException("TLS: cannot use " + b.tls + ": " + e.getMessage(), e);
            }
        }
        this.channel = cb.intercept(MetadataUtils.newAttachHeadersInterceptor(headers)).build();
        this.async = FleetGatewayGrpc.newStub(channel);
        this.blocking = FleetGatewayGrpc.newBlockingStub(channel);
    }

    /**
     * @param target the gateway, {@code host:port}
     * @return a builder
     */
    public static Builder builder(String target) {
        return new Builder(target);
    }

    /** Same as {@link #upload(Path, UploadSpec, UploadListener)} for a recording. */
    public UploadResult upload(Path file, String robotId, String episodeId, io.flywheel.fleet.v1.FileKind kind,
            UploadListener listener) throws IOException {
        return upload(file, UploadSpec.of(robotId, episodeId, kind), listener);
    }

    /**
     * Uploads one file, resuming after cuts, until the gateway has landed it (or had it already).
     *
     * @param file the file
     * @param spec robot, episode and kind
     * @param listener told of progress and retries (on this thread)
     * @return the gateway's final answer and what it took
     * @throws IOException when the file cannot be read
     * @throws UploadFailedException when the gateway refuses the upload (the status code and its message), or the
     *     retries ran out
     */
    public UploadResult upload(Path file, UploadSpec spec, UploadListener listener) throws IOException {
        long t0 = System.nanoTime();
        long size = Files.size(file);
        String sha = sha256(file);
        Begin begin = Begin.newBuilder().setRobotId(spec.robotId()).setEpisodeId(spec.episodeId())
                .setFileName(String.valueOf(file.getFileName())).setSizeBytes(size).setSha256(sha).setKind(spec.kind())
                .setRecordingSha256(spec.recordingSha256()).setCamera(spec.camera()).build();
        Attempt a = new Attempt(file, begin, listener);
        Duration backoff = o.initialBackoff;
        for (int attempt = 1; ; attempt++) {
            a.attempts = attempt;
            StatusRuntimeException failure;
            try {
                if (attempt > 1) {
                    UploadStatus s = status(spec.robotId(), sha);
                    if (s.getState() == UploadState.STAGING) {
                        listener.progress(file, s.getStagedBytes(), size);
                    }
                }
                UploadStatus done = a.run();
                return new UploadResult(file, sha, size, done, a.resumedFrom, a.bytesSent, attempt,
                        (System.nanoTime() - t0) / 1e9);
            } catch (StatusRuntimeException e) {
                failure = e;
            }
            Status.Code code = failure.getStatus().getCode();
            String what = TransportErrors.describe(failure.getStatus());
            String tls = TransportErrors.tlsProblem(failure.getStatus());
            if (tls != null) {
                throw new UploadFailedException(code, file + ": " + tls, failure, attempt, true);
            }
            if (!RETRY.contains(code) || attempt >= o.maxAttempts) {
                throw new UploadFailedException(code, file + ": " + what
                        + (RETRY.contains(code) ? " (gave up after " + attempt + " attempt(s))" : ""), failure, attempt,
                        !RETRY.contains(code));
            }
            long jitter = (long) (backoff.toMillis() * 0.2 * Math.random());
            Duration wait = backoff.plusMillis(jitter);
            listener.retrying(file, attempt, what, wait);
            try {
                Thread.sleep(wait.toMillis());
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                throw new UploadFailedException(Status.Code.CANCELLED, file + ": interrupted", failure, attempt, false);
            }
            backoff = backoff.multipliedBy(2).compareTo(o.maxBackoff) > 0 ? o.maxBackoff : backoff.multipliedBy(2);
        }
    }

    /**
     * Opens a live episode ({@code StreamObservations}): streams its messages as the robot records them, resuming
     * after cuts with this client's retries and backoff, and lands it as an MCAP at {@link LiveEpisode#end}. Opening
     * an episode the gateway has a journal of continues it (after the seq it holds).
     *
     * @param spec robot, episode, channels, frame filter, buffer
     * @return the open episode, once the gateway has taken the OPEN
     * @throws UploadFailedException when the gateway refuses it (the status and its message) or cannot be reached
     *     within the retries
     */
    public LiveEpisode openEpisode(LiveEpisodeSpec spec) throws InterruptedException {
        LiveEpisode e = new LiveEpisode(async, spec, o.maxAttempts, o.initialBackoff, o.maxBackoff, o.idleTimeout);
        e.start();
        return e;
    }

    /**
     * @param robotId the robot (the token's)
     * @param sha256 the file's SHA-256
     * @return the gateway's state of that upload (NOT_FOUND when it knows none)
     * @throws StatusRuntimeException when the gateway refuses the call or cannot be reached
     */
    public UploadStatus status(String robotId, String sha256) {
        return blocking.withDeadlineAfter(o.idleTimeout.toMillis(), TimeUnit.MILLISECONDS)
                .getUploadStatus(UploadStatusRequest.newBuilder().setRobotId(robotId).setSha256(sha256).build());
    }

    /**
     * Waits until a landed file is ingested (or ingest failed), asking every 100 ms.
     *
     * @param robotId the robot
     * @param sha256 the file's SHA-256
     * @param timeout how long to wait
     * @return the last state: INGESTED, INGEST_FAILED, or (at the timeout, or for a sidecar waiting for its
     *     recording) LANDED / INGESTING
     * @throws StatusRuntimeException when the gateway refuses the call or cannot be reached
     */
    public UploadStatus awaitIngested(String robotId, String sha256, Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (true) {
            UploadStatus s = status(robotId, sha256);
            boolean waiting = (s.getState() == UploadState.LANDED && s.getMessage().isEmpty())
                    || s.getState() == UploadState.INGESTING;
            if (!waiting || System.nanoTime() > end) {
                return s;
            }
            Thread.sleep(100);
        }
    }

    /** Closes the connection. */
    @Override
    public void close() {
        channel.shutdownNow();
        try {
            channel.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** @return the SHA-256 of a file, lower-case hex */
    public static String sha256(Path file) throws IOException {
        MessageDigest md;
        try {
            md = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        byte[] buf = new byte[1 << 16];
        try (InputStream in = Files.newInputStream(file)) {
            for (int n; (n = in.read(buf)) > 0; ) {
                md.update(buf, 0, n);
            }
        }
        return HexFormat.of().formatHex(md.digest());
    }

    /** The streams of one upload. */
    private final class Attempt {
        final Path file;
        final Begin begin;
        final UploadListener listener;
        long resumedFrom;
        long bytesSent;
        int attempts;

        Attempt(Path file, Begin begin, UploadListener listener) {
            this.file = file;
            this.begin = begin;
            this.listener = listener;
        }

        /** @return the final status; throws the stream's error status */
        UploadStatus run() throws IOException {
            LinkedBlockingQueue<Object> events = new LinkedBlockingQueue<>();
            Object readyLock = new Object();
            ClientCallStreamObserver<UploadRequest>[] holder = newHolder();
            async.uploadEpisode(new ClientResponseObserver<UploadRequest, UploadAck>() {
                @Override
                public void beforeStart(ClientCallStreamObserver<UploadRequest> requestStream) {
                    holder[0] = requestStream;
                    requestStream.setOnReadyHandler(() -> {
                        synchronized (readyLock) {
                            readyLock.notifyAll();
                        }
                    });
                }

                @Override
                public void onNext(UploadAck ack) {
                    events.add(ack);
                }

                @Override
                public void onError(Throwable t) {
                    events.add(t);
                }

                @Override
                public void onCompleted() {
                    events.add(COMPLETED);
                }
            });
            ClientCallStreamObserver<UploadRequest> req = holder[0];
            try {
                req.onNext(UploadRequest.newBuilder().setBegin(begin).build());
                UploadAck first = next(events, req);
                if (first.hasDone()) {
                    req.onCompleted();
                    resumedFrom = 0;
                    return first.getDone();
                }
                if (!first.hasBegun()) {
                    throw cancel(req, Status.INTERNAL.withDescription("the gateway answered BEGIN with " + first));
                }
                long size = begin.getSizeBytes();
                long pos = first.getBegun().getNextOffset();
                resumedFrom = pos;
                long acked = pos;
                listener.progress(file, acked, size);
                long window = (long) o.window * o.chunkBytes;
                ByteBuffer buf = ByteBuffer.allocate(o.chunkBytes);
                try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
                    while (pos < size) {
                        // drain acknowledgements; wait while too far ahead of them or while the transport is full
                        Object ev;
                        while ((ev = events.poll()) != null) {
                            acked = ackedOffset(ev, acked, req);
                        }
                        if (pos - acked >= window) {
                            acked = ackedOffset(poll(events, req), acked, req);
                            continue;
                        }
                        if (!req.isReady()) {
                            synchronized (readyLock) {
                                if (!req.isReady()) {
                                    readyLock.wait(50);
                                }
                            }
                            continue;
                        }
                        buf.clear();
                        buf.limit((int) Math.min(o.chunkBytes, size - pos));
                        int n = ch.read(buf, pos);
                        if (n <= 0) {
                            throw cancel(req, Status.INTERNAL.withDescription(file + " is shorter than " + size
                                    + " bytes now: it changed during the upload"));
                        }
                        buf.flip();
                        req.onNext(UploadRequest.newBuilder().setChunk(Chunk.newBuilder().setOffset(pos)
                                .setData(ByteString.copyFrom(buf))).build());
                        pos += n;
                        bytesSent += n;
                    }
                }
                req.onNext(UploadRequest.newBuilder().setEnd(End.getDefaultInstance()).build());
                req.onCompleted();
                while (true) {
                    Object ev = poll(events, req);
                    if (ev instanceof UploadAck a && a.hasDone()) {
                        return a.getDone();
                    }
                    acked = ackedOffset(ev, acked, req);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw cancel(req, Status.CANCELLED.withDescription("interrupted"));
            } catch (UncheckedIOException e) {
                throw cancel(req, Status.INTERNAL.withDescription(e.getMessage()));
            } catch (IOException e) {
                req.cancel("cannot read " + file, e);
                throw e;
            }
        }

        private long ackedOffset(Object ev, long acked, ClientCallStreamObserver<UploadRequest> req) {
            if (ev instanceof UploadAck a) {
                if (a.hasOffset()) {
                    long off = a.getOffset().getAckedOffset();
                    if (off > acked) {
                        listener.progress(file, off, begin.getSizeBytes());
                        return off;
                    }
                    return acked;
                }
                throw cancel(req, Status.INTERNAL.withDescription("unexpected answer from the gateway: " + a));
            }
            throw terminal(ev);
        }

        private UploadAck next(LinkedBlockingQueue<Object> events, ClientCallStreamObserver<UploadRequest> req)
                throws InterruptedException {
            Object ev = poll(events, req);
            if (ev instanceof UploadAck a) {
                return a;
            }
            throw terminal(ev);
        }

        private Object poll(LinkedBlockingQueue<Object> events, ClientCallStreamObserver<UploadRequest> req)
                throws InterruptedException {
            Object ev = events.poll(o.idleTimeout.toMillis(), TimeUnit.MILLISECONDS);
            if (ev == null) {
                throw cancel(req, Status.DEADLINE_EXCEEDED.withDescription("no answer from the gateway in "
                        + o.idleTimeout.toSeconds() + " s"));
            }
            return ev;
        }

        private StatusRuntimeException terminal(Object ev) {
            if (ev == COMPLETED) {
                return Status.INTERNAL.withDescription("the gateway ended the stream without a final answer")
                        .asRuntimeException();
            }
            return ev instanceof Throwable t ? Status.fromThrowable(t).asRuntimeException()
                    : Status.INTERNAL.withDescription("unexpected event " + ev).asRuntimeException();
        }

        private StatusRuntimeException cancel(ClientCallStreamObserver<UploadRequest> req, Status s) {
            req.cancel(s.getDescription(), null);
            return s.asRuntimeException();
        }
    }

    @SuppressWarnings("unchecked")
    private static ClientCallStreamObserver<UploadRequest>[] newHolder() {
        return new ClientCallStreamObserver[1];
    }

    /** Options of a {@link FleetClient}. */
    public static final class Builder {
        private final String target;
        private String token = "";
        private int chunkBytes = 1 << 20;
        private int window = 4;
        private int maxAttempts = 10;
        private Duration initialBackoff = Duration.ofMillis(200);
        private Duration maxBackoff = Duration.ofSeconds(10);
        private Duration idleTimeout = Duration.ofSeconds(60);
        private TlsFiles tls;

        private Builder(String target) {
            this.target = Objects.requireNonNull(target, "target");
        }

        /** @param files TLS to the gateway ({@link TlsFiles#client}); null (the default) for plain-text HTTP/2 */
        public Builder tls(TlsFiles files) {
            tls = files;
            return this;
        }

        /** @param t the robot's bearer token ({@code flywheel gateway token add}) */
        public Builder token(String t) {
            token = Objects.requireNonNull(t, "token");
            return this;
        }

        /** @param bytes chunk size, 1 KiB..4 MiB (default 1 MiB) */
        public Builder chunkBytes(int bytes) {
            if (bytes < 1024 || bytes > 4 << 20) {
                throw new IllegalArgumentException("the chunk size must be 1 KiB..4 MiB, got " + bytes);
            }
            chunkBytes = bytes;
            return this;
        }

        /** @param chunks chunks sent ahead of the gateway's acknowledgements, &ge; 1 (default 4) */
        public Builder window(int chunks) {
            if (chunks < 1) {
                throw new IllegalArgumentException("the window must be >= 1 chunk, got " + chunks);
            }
            window = chunks;
            return this;
        }

        /** @param n streams opened per file at most, &ge; 1 (default 10) */
        public Builder maxAttempts(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("max attempts must be >= 1, got " + n);
            }
            maxAttempts = n;
            return this;
        }

        /**
         * @param initial wait after the first failed attempt (doubled after each, plus up to 20% jitter)
         * @param max the longest wait
         */
        public Builder backoff(Duration initial, Duration max) {
            if (initial.isNegative() || max.compareTo(initial) < 0) {
                throw new IllegalArgumentException("backoff: need 0 <= initial <= max, got " + initial + ", " + max);
            }
            initialBackoff = initial;
            maxBackoff = max;
            return this;
        }

        /** @param d how long to wait for an answer before giving the attempt up (default 60 s) */
        public Builder idleTimeout(Duration d) {
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException("the idle timeout must be > 0");
            }
            idleTimeout = d;
            return this;
        }

        /** @return the client, connecting lazily */
        public FleetClient build() {
            return new FleetClient(this);
        }
    }
}
