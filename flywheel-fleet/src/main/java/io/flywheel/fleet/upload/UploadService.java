package io.flywheel.fleet.upload;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToLongFunction;

import com.google.common.util.concurrent.RateLimiter;
import com.google.protobuf.ByteString;

import io.flywheel.fleet.auth.TokenInterceptor;
import io.flywheel.fleet.v1.Begin;
import io.flywheel.fleet.v1.Begun;
import io.flywheel.fleet.v1.Chunk;
import io.flywheel.fleet.v1.FileKind;
import io.flywheel.fleet.v1.Offset;
import io.flywheel.fleet.v1.UploadAck;
import io.flywheel.fleet.v1.UploadRequest;
import io.flywheel.fleet.v1.UploadState;
import io.flywheel.fleet.v1.UploadStatus;
import io.flywheel.fleet.v1.UploadStatusRequest;
import io.flywheel.lake.Lake;
import io.flywheel.rows.RawFileRow;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;

/**
 * The gateway's upload RPCs ({@code UploadEpisode}, {@code GetUploadStatus} of {@code gateway.proto}) over a lake, and
 * the landing of the files live episodes become ({@link #land}).
 *
 * <p>Each upload is staged in {@link Staging} under its {@link UploadIds#uploadId upload id}, so a retry of the same
 * file by the same robot continues the same staging file, also after a restart of the gateway. One stream at a time
 * may write an upload (a second gets ABORTED). Chunks are written as they arrive, hashed on the way, and the stream
 * asks gRPC for the next message only after the previous one is written (manual inbound flow control): a slow disk
 * throttles the senders through HTTP/2 flow control instead of buffering chunks in memory. At END the SHA-256 and
 * the file's magic bytes are checked, the staging file is flushed and renamed into the raw layer, and the file is
 * queued for ingest ({@link IngestQueue}).
 *
 * <p>Limits ({@link UploadLimits}): the file size, and a quota per robot on the declared sizes of its unfinished
 * uploads, both checked at BEGIN.
 *
 * <p>A lake on S3: the staging files lie in a local spool folder laid out as a local lake's, and each upload goes on
 * into an S3 multipart upload to its raw key as its bytes arrive ({@link S3RawMirror}), completed at END after the
 * checks; ingest reads the spooled copy and records the object's {@code s3://} URI, and the copy is removed once the
 * rows are committed.
 */
public final class UploadService implements AutoCloseable {
    private static final int MAX_NAME = 256;

    private final Lake lake;
    private final Staging staging;
    private final UploadLimits limits;
    private final IngestQueue ingest;
    /** The lake's bucket, for a lake on S3: uploads go on into multipart uploads there; null for a local lake. */
    private final S3RawMirror mirror;
    /** {@link UploadLimits#stagingBytesPerSecond()}, shared by every stream; null without a limit. */
    private final RateLimiter stagingRate;
    private final Map<String, StagedUpload> uploads = new ConcurrentHashMap<>();
    private final Set<String> receiving = ConcurrentHashMap.newKeySet();
    private final Set<Receiver> streams = ConcurrentHashMap.newKeySet();
    private final Map<String, IngestQueue.Outcome> ingested = new ConcurrentHashMap<>();
    private final Object admission = new Object();
    private final Object lakeReads = new Object();
    private final AtomicLong landed = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong bytesReceived = new AtomicLong();
    private volatile ToLongFunction<String> alsoStaged = robot -> 0;
    private final AtomicLong expired = new AtomicLong();
    private final Consumer<String> log;
    /** Runs {@link #expireStaged}; null when uploads never expire or the lake cannot take uploads. */
    private ScheduledExecutorService expiry;

    /**
     * Opens the staging area of the lake, takes up the uploads a previous gateway left (staged ones wait for their
     * robot to resume, landed ones are queued for ingest again) and starts the ingest queue.
     *
     * @param lake the lake (kept open by the caller until after {@link #close()})
     * @param limits size limits
     * @param settings how landed files are ingested
     * @param problems receives a line per state file that could not be read (left as it is)
     * @param log receives a line for each staged upload expired, from the expiry's own thread
     * @param spool for a lake on S3: the local folder uploads are staged in on their way into S3 multipart uploads
     *     ({@link S3RawMirror}), laid out as a local lake's {@code _staging} and {@code raw} folders; unused for a
     *     local lake, whose own folder is the staging area
     */
    public UploadService(Lake lake, UploadLimits limits, IngestSettings settings, List<String> problems,
            Consumer<String> log, Path spool) {
        this.lake = lake;
        this.log = log;
        this.limits = limits;
        this.stagingRate = limits.stagingBytesPerSecond() == 0 ? null
                : RateLimiter.create(limits.stagingBytesPerSecond());
        if (lake.location().startsWith("s3://")) {
            this.staging = new Staging(spool);
            this.mirror = new S3RawMirror(lake.location(), lake.storage(), staging,
                    S3RawMirror.DEFAULT_PART_BYTES);
        } else {
            this.staging = new Staging(Path.of(lake.location()));
            this.mirror = null;
        }
        this.ingest = new IngestQueue(lake, staging, settings, new IngestListener(), mirror);
        for (StagedUpload u : staging.recover(problems)) {
            uploads.put(u.uploadId(), u);
            // landed, or failed for the lake's or the disk's sake (still in raw/): ingest (again)
            boolean retry = StagedUpload.INGEST_FAILED.equals(u.state()) && u.landedPath().startsWith(Staging.RAW + "/");
            if ((StagedUpload.LANDED.equals(u.state()) || retry) && !u.sidecar()) {
                ingest.submit(u);
            }
        }
        if (!limits.stagedExpiry().isZero()) {
            long everyMs = Math.max(1000, Math.min(3_600_000L, limits.stagedExpiry().toMillis() / 4));
            expiry = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "flywheel-staged-expiry");
                t.setDaemon(true);
                return t;
            });
            expiry.scheduleWithFixedDelay(() -> {
                try {
                    expireStaged(System.currentTimeMillis());
                } catch (RuntimeException e) { // a disk error: said, and tried again next time
                    log.accept("expiring staged uploads failed: " + e.getMessage());
                }
            }, 0, everyMs, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Removes the staged uploads that have had no new bytes for {@link UploadLimits#stagedExpiry()} (the later of the
     * state's last change and the staging file's last write), not counting one receiving on a stream now: their
     * staging and state files go, their robot's quota is free again. Runs by itself at start and then every
     * {@code min(1 h, expiry / 4)}; public for tests and operators.
     *
     * @param nowMs the time to measure from, ms since the Unix epoch
     * @return the uploads removed
     */
    public List<StagedUpload> expireStaged(long nowMs) {
        List<StagedUpload> gone = new ArrayList<>();
        if (limits.stagedExpiry().isZero()) {
            return gone;
        }
        long cutoffMs = nowMs - limits.stagedExpiry().toMillis();
        synchronized (admission) {
            for (StagedUpload u : List.copyOf(uploads.values())) {
                if (!StagedUpload.STAGING.equals(u.state()) || receiving.contains(u.uploadId())) {
                    continue;
                }
                long lastMs = Math.max(u.updatedAtNs() / 1_000_000L, staging.lastWriteMs(u));
                if (lastMs < cutoffMs) {
                    long had = staging.stagedBytes(u);
                    if (mirror != null) {
                        mirror.abort(u);
                    }
                    staging.remove(u);
                    uploads.remove(u.uploadId());
                    gone.add(u);
                    expired.incrementAndGet();
                    log.accept("expired the staged upload " + u.uploadId() + " of robot " + u.robotId() + " ("
                            + u.fileName() + ", " + had + " of " + u.sizeBytes() + " bytes): no new bytes since "
                            + java.time.Instant.ofEpochMilli(lastMs));
                }
            }
        }
        return gone;
    }

    /** @return the staging's root: the lake's folder, or for a lake on S3 the local spool */
    public Path lakeRoot() {
        return staging.lakeRoot();
    }

    /**
     * Counts more bytes against each robot's quota than its unfinished uploads (a live episode's journal).
     *
     * @param bytes robot id to bytes staged elsewhere
     */
    public void alsoStaged(ToLongFunction<String> bytes) {
        alsoStaged = bytes;
    }

    /**
     * @param robot a robot id
     * @return the declared sizes of the robot's unfinished uploads, bytes (what counts against its quota with what
     *     {@link #alsoStaged} adds)
     */
    public long stagedBytes(String robot) {
        long reserved = 0;
        for (StagedUpload s : uploads.values()) {
            if (s.robotId().equals(robot) && StagedUpload.STAGING.equals(s.state())) {
                reserved += s.sizeBytes();
            }
        }
        return reserved;
    }

    /**
     * Waits, when the gateway has a staging rate ({@link UploadLimits#stagingBytesPerSecond()}), until {@code bytes}
     * more may be written to staging: uploads and live episodes' journals share the rate.
     */
    public void throttle(int bytes) {
        if (stagingRate != null && bytes > 0) {
            stagingRate.acquire(bytes);
        }
    }

    /**
     * Lands a recording the gateway made itself (a live episode's MCAP) as if the robot had uploaded it: it moves to
     * {@code raw/<robot>/<sha256>.mcap}, its state is saved as a landed upload (so GetUploadStatus knows it and a
     * restarted gateway ingests it) and it is queued for ingest. A file the gateway or the lake has already (the same
     * SHA-256) is deleted instead, and that file's state answered: landing twice lands once.
     *
     * @param robot the robot
     * @param episodeId the robot's name of the episode
     * @param fileName the name to show for it
     * @param file the finished MCAP, in the lake's folder (moved or deleted)
     * @param sha256 its SHA-256, lower-case hex
     * @return its state: LANDED, or where the file known already stands
     * @throws IOException when the file cannot be moved
     */
    public UploadStatus land(String robot, String episodeId, String fileName, Path file, String sha256)
            throws IOException {
        String id = UploadIds.uploadId(robot, sha256);
        synchronized (admission) {
            StagedUpload known = uploads.get(id);
            if (known != null && !StagedUpload.STAGING.equals(known.state())) {
                Files.deleteIfExists(file);
                return status(known);
            }
            if (known == null && (ingested.containsKey(id) || rawFile(sha256).isPresent())) {
                Files.deleteIfExists(file);
                UploadStatus s = statusOf(robot, sha256);
                return s.toBuilder().setAlreadyInLake(!ingested.containsKey(id)).build();
            }
            if (known != null && !receiving.add(id)) {
                throw new IOException("robot " + robot + " is uploading " + sha256 + " on a stream right now");
            }
            long now = System.currentTimeMillis() * 1_000_000L;
            StagedUpload u = new StagedUpload(id, robot, sha256, Files.size(file), FileKind.MCAP.name(), fileName,
                    episodeId, "", "", StagedUpload.STAGING, "", "", now, now);
            try {
                if (mirror != null) {
                    mirror.put(u, file);
                }
                Path target = staging.landFile(file, u);
                if (known != null) {
                    Files.deleteIfExists(staging.partFile(known)); // an upload of the same bytes, now landed
                }
                StagedUpload l = u.withState(StagedUpload.LANDED, staging.relative(target), "");
                staging.save(l);
                uploads.put(id, l);
                landed.incrementAndGet();
                ingest.submit(l);
                return status(l);
            } finally {
                if (known != null) {
                    receiving.remove(id);
                }
            }
        }
    }

    /** @return the counts so far */
    public UploadStats stats() {
        int staged = (int) uploads.values().stream().filter(u -> StagedUpload.STAGING.equals(u.state())).count();
        return new UploadStats(receiving.size(), staged, landed.get(), refused.get(), bytesReceived.get(),
                ingest.waiting(), ingest.current().isEmpty() ? 0 : 1, ingest.ingestedCount(), ingest.failedCount(),
                expired.get());
    }

    /**
     * Ends every upload stream in flight with UNAVAILABLE ("the gateway is stopping"), after the message being written;
     * their staged bytes stay, and the robots resume them from a gateway started later on the lake.
     */
    public void stopStreams() {
        for (Receiver r : streams) {
            r.stop();
        }
    }

    /** Stops the ingest queue after the file being ingested; staged and landed uploads stay for the next gateway. */
    @Override
    public void close() {
        if (expiry != null) {
            expiry.shutdownNow();
        }
        if (ingest != null) {
            ingest.close();
        }
        if (mirror != null) {
            mirror.close();
        }
    }

    // ------------------------------------------------------------------ GetUploadStatus

    /** {@code GetUploadStatus} of gateway.proto. */
    public void getUploadStatus(UploadStatusRequest req, StreamObserver<UploadStatus> out) {
        try {
            String robot = authorised(req.getRobotId());
            String bad = UploadIds.checkSha256(req.getSha256());
            if (bad != null) {
                throw new Refusal(Status.INVALID_ARGUMENT.withDescription(bad));
            }
            String sha = req.getSha256().toLowerCase(Locale.ROOT);
            out.onNext(statusOf(robot, sha));
            out.onCompleted();
        } catch (Refusal r) {
            out.onError(r.status.asRuntimeException());
        } catch (RuntimeException e) {
            out.onError(Status.INTERNAL.withDescription(String.valueOf(e.getMessage())).asRuntimeException());
        }
    }

    /**
     * @param robot a robot id
     * @param sha a SHA-256, lower-case hex
     * @return the state of robot's upload of sha: known upload, ingested by this gateway, in the lake, or not found
     */
    public UploadStatus statusOf(String robot, String sha) {
        String id = UploadIds.uploadId(robot, sha);
        StagedUpload u = uploads.get(id);
        if (u != null) {
            return status(u);
        }
        IngestQueue.Outcome o = ingested.get(id);
        if (o != null) {
            return ingestedStatus(robot, sha, id, o);
        }
        Optional<RawFileRow> row = rawFile(sha);
        if (row.isPresent()) {
            return inLake(robot, sha, id, row.get(), false);
        }
        return UploadStatus.newBuilder().setRobotId(robot).setSha256(sha).setUploadId(id)
                .setState(UploadState.NOT_FOUND).build();
    }

    private UploadStatus status(StagedUpload u) {
        UploadStatus.Builder b = UploadStatus.newBuilder().setRobotId(u.robotId()).setSha256(u.sha256())
                .setUploadId(u.uploadId()).setSizeBytes(u.sizeBytes()).setEpisodeId(u.episodeId())
                .setMessage(u.message()).setUpdatedAtNs(u.updatedAtNs());
        switch (u.state()) {
            case StagedUpload.STAGING -> b.setState(UploadState.STAGING).setStagedBytes(staging.stagedBytes(u));
            case StagedUpload.INGEST_FAILED -> b.setState(UploadState.INGEST_FAILED);
            default -> b.setState(ingest.current().map(c -> c.uploadId().equals(u.uploadId())).orElse(false)
                    ? UploadState.INGESTING : UploadState.LANDED);
        }
        if (!u.landedPath().isEmpty()) {
            b.setLandedPath(u.landedPath()).setLandedUri(landedUri(u));
        }
        return b.build();
    }

    /** @return where a landed (or rejected) upload lies: a file in the lake's folder, or an object in its bucket */
    private String landedUri(StagedUpload u) {
        return mirror == null ? staging.lakeRoot().resolve(u.landedPath()).toUri().toString()
                : mirror.uriOf(u.landedPath());
    }

    private UploadStatus ingestedStatus(String robot, String sha, String id, IngestQueue.Outcome o) {
        UploadStatus.Builder b = UploadStatus.newBuilder().setRobotId(robot).setSha256(sha).setUploadId(id)
                .setState(UploadState.INGESTED).setLandedUri(o.rawUri()).setRecordingId(o.recordingId())
                .setEpisodes(o.episodes()).setFrames(o.frames());
        landedPathOf(o.rawUri()).ifPresent(b::setLandedPath);
        return b.build();
    }

    private UploadStatus inLake(String robot, String sha, String id, RawFileRow row, boolean alreadyInLake) {
        UploadStatus.Builder b = UploadStatus.newBuilder().setRobotId(robot).setSha256(sha).setUploadId(id)
                .setState(UploadState.INGESTED).setSizeBytes(row.bytes()).setLandedUri(row.uri())
                .setRecordingId(row.recordingId() == null ? "" : row.recordingId()).setAlreadyInLake(alreadyInLake);
        landedPathOf(row.uri()).ifPresent(b::setLandedPath);
        return b.build();
    }

    /** @return the path relative to the lake root of a raw file URI inside the lake's folder */
    private Optional<String> landedPathOf(String uri) {
        if (mirror != null) {
            return mirror.pathOf(uri);
        }
        try {
            Path p = Path.of(java.net.URI.create(uri)).toAbsolutePath().normalize();
            return p.startsWith(staging.lakeRoot()) ? Optional.of(staging.relative(p)) : Optional.empty();
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    private Optional<RawFileRow> rawFile(String sha) {
        synchronized (lakeReads) {
            lake.refresh();
            return lake.rawFile(sha);
        }
    }

    /** @return the call's robot when it is {@code robotId}; else a Refusal */
    private static String authorised(String robotId) {
        Status s = callerRefusal(robotId);
        if (s != null) {
            throw new Refusal(s);
        }
        return robotId;
    }

    /**
     * @param robotId the robot a request names
     * @return null when the current call's token is that robot's; else the status refusing the request:
     *     UNAUTHENTICATED (no token on the call), INVALID_ARGUMENT (not a robot id), PERMISSION_DENIED (another
     *     robot's token)
     */
    public static Status callerRefusal(String robotId) {
        String robot = TokenInterceptor.ROBOT.get();
        if (robot == null) {
            return Status.UNAUTHENTICATED.withDescription("the call carries no robot token");
        }
        String bad = UploadIds.checkRobotId(robotId);
        if (bad != null) {
            return Status.INVALID_ARGUMENT.withDescription(bad);
        }
        if (!robot.equals(robotId)) {
            return Status.PERMISSION_DENIED.withDescription("the token is robot " + robot
                    + "'s; the request names robot " + robotId + " (a robot uploads only as itself)");
        }
        return null;
    }

    // ------------------------------------------------------------------ UploadEpisode

    /** {@code UploadEpisode} of gateway.proto. */
    public StreamObserver<UploadRequest> uploadEpisode(StreamObserver<UploadAck> responseObserver) {
        ServerCallStreamObserver<UploadAck> out = (ServerCallStreamObserver<UploadAck>) responseObserver;
        out.disableAutoRequest();
        out.setOnCancelHandler(() -> { });
        Receiver r = new Receiver(out);
        streams.add(r);
        out.request(1);
        return r;
    }

    /** A refusal: the status to close the stream with. */
    private static final class Refusal extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final transient Status status;

        Refusal(Status status) {
            super(status.getDescription(), null, false, false);
            this.status = status;
        }
    }

    /** One UploadEpisode stream. gRPC calls it one message at a time. */
    private final class Receiver implements StreamObserver<UploadRequest> {
        private final ServerCallStreamObserver<UploadAck> out;
        private StagedUpload upload;
        private boolean holding;
        private FileChannel channel;
        private MessageDigest digest;
        private long next;
        private boolean done;

        Receiver(ServerCallStreamObserver<UploadAck> out) {
            this.out = out;
        }

        @Override
        public synchronized void onNext(UploadRequest req) {
            if (done) {
                return;
            }
            try {
                switch (req.getMessageCase()) {
                    case BEGIN -> begin(req.getBegin());
                    case CHUNK -> chunk(req.getChunk());
                    case END -> end();
                    default -> throw invalid("an UploadRequest with none of begin, chunk, end");
                }
            } catch (Refusal r) {
                fail(r.status);
            } catch (IOException | UncheckedIOException e) {
                fail(Status.INTERNAL.withDescription("staging " + (upload == null ? "" : upload.uploadId() + " ")
                        + "failed: " + e.getMessage() + (upload == null ? "" : "; the bytes staged so far are kept")));
            } catch (RuntimeException e) {
                fail(Status.INTERNAL.withDescription("upload failed: " + e));
            }
            if (!done) {
                out.request(1);
            }
        }

        @Override
        public synchronized void onError(Throwable t) { // the client cancelled, or the gateway stops: bytes stay staged
            done = true;
            release();
        }

        synchronized void stop() {
            if (!done) {
                done = true;
                release();
                out.onError(Status.UNAVAILABLE.withDescription("the gateway is stopping" + (upload == null ? ""
                        : "; " + next + " bytes of " + upload.fileName() + " are staged: resume from GetUploadStatus"))
                        .asRuntimeException());
            }
        }

        @Override
        public synchronized void onCompleted() {
            if (!done) {
                fail(Status.INVALID_ARGUMENT.withDescription(upload == null ? "the stream ended before BEGIN"
                        : "the stream ended before END, after " + next + " of " + upload.sizeBytes()
                                + " bytes; the bytes staged are kept: continue from offset " + next));
            }
        }

        private void fail(Status s) {
            done = true;
            release();
            refused.incrementAndGet();
            out.onError(s.asRuntimeException());
        }

        private void release() {
            streams.remove(this);
            if (channel != null) {
                try {
                    channel.close();
                } catch (IOException ignored) {
                    // the bytes written are in the file already
                }
                channel = null;
            }
            if (holding) {
                receiving.remove(upload.uploadId());
                holding = false;
            }
        }

        private void reply(UploadStatus s) {
            done = true;
            release();
            out.onNext(UploadAck.newBuilder().setDone(s).build());
            out.onCompleted();
        }

        private void begin(Begin b) throws IOException {
            if (upload != null) {
                throw invalid("a second BEGIN on one stream (one file per UploadEpisode stream)");
            }
            String robot = authorised(b.getRobotId());
            String bad = UploadIds.checkSha256(b.getSha256());
            if (bad != null) {
                throw invalid(bad);
            }
            String sha = b.getSha256().toLowerCase(Locale.ROOT);
            if (b.getKind() == FileKind.FILE_KIND_UNSPECIFIED || b.getKind() == FileKind.UNRECOGNIZED) {
                throw invalid("kind is missing or unknown (" + b.getKindValue() + "): MCAP, ROS1_BAG or SIDECAR_MP4");
            }
            long size = b.getSizeBytes();
            if (size == 0) {
                throw invalid("size_bytes is 0: an empty file is not a recording");
            }
            if (size < 0 || size > limits.maxFileBytes()) {
                throw new Refusal(Status.RESOURCE_EXHAUSTED.withDescription("file " + b.getFileName() + " is "
                        + Long.toUnsignedString(size) + " bytes; the gateway takes files of at most "
                        + limits.maxFileBytes() + " bytes"));
            }
            String name = b.getFileName();
            if (name.length() > MAX_NAME || name.contains("/") || name.contains("\\") || name.indexOf('\0') >= 0) {
                throw invalid("file_name must be a plain name of at most " + MAX_NAME + " characters, without '/'");
            }
            if (b.getEpisodeId().length() > MAX_NAME) {
                throw invalid("episode_id is longer than " + MAX_NAME + " characters");
            }
            String recording = "";
            String camera = "";
            if (b.getKind() == FileKind.SIDECAR_MP4) {
                String badRec = UploadIds.checkSha256(b.getRecordingSha256());
                if (badRec != null) {
                    throw invalid("a SIDECAR_MP4 needs recording_sha256, the SHA-256 of its recording: " + badRec);
                }
                recording = b.getRecordingSha256().toLowerCase(Locale.ROOT);
                camera = b.getCamera().isEmpty() ? cameraOf(name) : b.getCamera();
                String badCam = UploadIds.checkCamera(camera);
                if (badCam != null) {
                    throw invalid(badCam + " (give camera, or a file_name NAME.<camera>.mp4)");
                }
            } else if (!b.getRecordingSha256().isEmpty() || !b.getCamera().isEmpty()) {
                throw invalid("recording_sha256 and camera are for SIDECAR_MP4 only; kind is " + b.getKind());
            }
            String id = UploadIds.uploadId(robot, sha);
            StagedUpload known = uploads.get(id);
            if (known == null) {
                Optional<RawFileRow> row = rawFile(sha);
                if (row.isPresent()) {
                    reply(inLake(robot, sha, id, row.get(), true));
                    return;
                }
                if (!recording.isEmpty() && rawFile(recording).isPresent()) {
                    throw new Refusal(Status.FAILED_PRECONDITION.withDescription("the recording " + recording
                            + " of sidecar " + name + " is in the lake already, ingested without it: upload sidecars"
                            + " before their recording"));
                }
            } else if (!StagedUpload.STAGING.equals(known.state())) {
                reply(status(known));
                return;
            }
            synchronized (admission) {
                StagedUpload u = uploads.get(id);
                if (u != null) {
                    if (!StagedUpload.STAGING.equals(u.state())) {
                        reply(status(u));
                        return;
                    }
                    if (u.sizeBytes() != size || !u.kind().equals(b.getKind().name())) {
                        throw invalid("upload " + id + " of " + sha + " was begun as " + u.kind() + " of "
                                + u.sizeBytes() + " bytes; this BEGIN says " + b.getKind() + " of " + size);
                    }
                    if (!receiving.add(id)) {
                        throw new Refusal(Status.ABORTED.withDescription("robot " + robot + " is uploading " + sha
                                + " on another stream right now (upload " + id + "); retry when it has ended"));
                    }
                } else {
                    long reserved = 0;
                    int unfinished = 0;
                    for (StagedUpload s : uploads.values()) {
                        if (s.robotId().equals(robot) && StagedUpload.STAGING.equals(s.state())) {
                            reserved += s.sizeBytes();
                            unfinished++;
                        }
                    }
                    long live = alsoStaged.applyAsLong(robot);
                    if (reserved + live + size > limits.robotQuotaBytes()) {
                        throw new Refusal(Status.RESOURCE_EXHAUSTED.withDescription("robot " + robot + " has "
                                + reserved + " bytes staged in " + unfinished + " unfinished upload(s)"
                                + (live > 0 ? " and " + live + " in live episodes" : "") + "; with "
                                + name + " (" + size + " bytes) that is past its quota of " + limits.robotQuotaBytes()
                                + " bytes: finish or resume those first"));
                    }
                    long now = System.currentTimeMillis() * 1_000_000L;
                    u = new StagedUpload(id, robot, sha, size, b.getKind().name(), name, b.getEpisodeId(), recording,
                            camera, StagedUpload.STAGING, "", "", now, now);
                    staging.save(u);
                    uploads.put(id, u);
                    receiving.add(id);
                }
                upload = u;
                holding = true;
            }
            Path part = staging.partFile(upload);
            channel = FileChannel.open(part, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.READ);
            digest = UploadIds.sha256();
            long have = channel.size();
            if (have > size) { // not bytes of this file: start again
                channel.truncate(0);
                have = 0;
            }
            ByteBuffer buf = ByteBuffer.allocate(1 << 16);
            for (long pos = 0; pos < have; ) {
                buf.clear();
                int n = channel.read(buf, pos);
                if (n < 0) {
                    break;
                }
                buf.flip();
                digest.update(buf);
                pos += n;
            }
            next = have;
            channel.position(have);
            if (mirror != null) {
                mirror.opened(upload, have);
            }
            out.onNext(UploadAck.newBuilder().setBegun(Begun.newBuilder().setUploadId(id).setNextOffset(next)).build());
        }

        private void chunk(Chunk c) throws IOException {
            if (upload == null) {
                throw invalid("CHUNK before BEGIN: the first message of a stream is BEGIN");
            }
            ByteString data = c.getData();
            if (c.getOffset() != next) {
                throw invalid("chunk at offset " + Long.toUnsignedString(c.getOffset()) + "; the next expected offset"
                        + " is " + next + " (chunks come in order, without gaps: resume from GetUploadStatus)");
            }
            if (next + data.size() > upload.sizeBytes()) {
                throw invalid("chunk [" + next + ", " + (next + data.size()) + ") goes past the declared size of "
                        + upload.sizeBytes() + " bytes");
            }
            throttle(data.size());
            ByteBuffer bb = data.asReadOnlyByteBuffer();
            while (bb.hasRemaining()) {
                channel.write(bb);
            }
            digest.update(data.asReadOnlyByteBuffer());
            next += data.size();
            bytesReceived.addAndGet(data.size());
            if (mirror != null) {
                mirror.written(upload, next);
            }
            out.onNext(UploadAck.newBuilder().setOffset(Offset.newBuilder().setAckedOffset(next)).build());
        }

        private void end() throws IOException {
            if (upload == null) {
                throw invalid("END before BEGIN: the first message of a stream is BEGIN");
            }
            StagedUpload u = upload;
            if (next != u.sizeBytes()) {
                throw invalid("END after " + next + " of " + u.sizeBytes() + " bytes; the bytes staged are kept:"
                        + " continue from offset " + next);
            }
            channel.force(true);
            channel.close();
            channel = null;
            String got = HexFormat.of().formatHex(digest.digest());
            if (!got.equals(u.sha256())) {
                discard(u);
                throw new Refusal(Status.DATA_LOSS.withDescription("the SHA-256 of the " + next + " bytes received of "
                        + u.fileName() + " is " + got + ", BEGIN declared " + u.sha256() + "; the staged bytes are"
                        + " removed: upload the file again from offset 0"));
            }
            String notKind = checkMagic(u);
            if (notKind != null) {
                discard(u);
                throw invalid(notKind);
            }
            if (mirror != null) {
                mirror.complete(u, u.sizeBytes()); // the object is in the bucket, whole; the local copy is for ingest
            }
            Path target = staging.land(u);
            String note = u.sidecar() ? "sidecar video of camera " + u.camera() + " of recording " + u.recordingSha256()
                    + ": ingested with the recording, once it lands" : "";
            StagedUpload l = u.withState(StagedUpload.LANDED, staging.relative(target), note);
            staging.save(l);
            uploads.put(l.uploadId(), l);
            landed.incrementAndGet();
            if (!l.sidecar()) {
                ingest.submit(l);
            }
            reply(status(l));
        }

        private void discard(StagedUpload u) {
            if (mirror != null) {
                mirror.abort(u);
            }
            staging.remove(u);
            uploads.remove(u.uploadId());
        }

        private String checkMagic(StagedUpload u) throws IOException {
            Path part = staging.partFile(u);
            boolean ok = switch (u.fileKind()) {
                case MCAP -> formatOf(part) == io.flywheel.ingest.SourceFormat.MCAP;
                case ROS1_BAG -> formatOf(part) == io.flywheel.ingest.SourceFormat.ROS1_BAG;
                case SIDECAR_MP4 -> isMp4(part);
                default -> false;
            };
            return ok ? null : u.fileName() + " (" + u.sha256() + ") is not " + switch (u.fileKind()) {
                case MCAP -> "an MCAP file: it does not start with the MCAP magic 0x89 MCAP0 \\r\\n";
                case ROS1_BAG -> "a ROS 1 bag: it does not start with #ROSBAG V2.0";
                default -> "an MP4 file: it has no ftyp box at offset 4";
            } + "; the staged bytes are removed";
        }
    }

    /** @return the recording format ingest sees in the file's first bytes, or null for none */
    private static io.flywheel.ingest.SourceFormat formatOf(Path file) throws IOException {
        try {
            return io.flywheel.ingest.Sources.formatOf(file);
        } catch (io.flywheel.ingest.IngestException e) {
            return null;
        }
    }

    /** @return whether the file has an ISO BMFF {@code ftyp} box at offset 4 */
    private static boolean isMp4(Path file) throws IOException {
        byte[] h = new byte[8];
        int n;
        try (InputStream in = Files.newInputStream(file)) {
            n = in.readNBytes(h, 0, h.length);
        }
        return n == 8 && h[4] == 'f' && h[5] == 't' && h[6] == 'y' && h[7] == 'p';
    }

    private static String cameraOf(String fileName) {
        String n = fileName.endsWith(".mp4") ? fileName.substring(0, fileName.length() - 4) : fileName;
        int dot = n.lastIndexOf('.');
        return dot < 0 ? "" : n.substring(dot + 1);
    }

    private static Refusal invalid(String message) {
        return new Refusal(Status.INVALID_ARGUMENT.withDescription(message));
    }

    /** Keeps the uploads' states as ingest goes. */
    private final class IngestListener implements IngestQueue.Listener {
        @Override
        public void ingesting(StagedUpload u) {
            // the status asks the queue which upload it is reading
        }

        @Override
        public void ingested(StagedUpload u, IngestQueue.Outcome outcome) {
            ingested.put(u.uploadId(), outcome);
            staging.removeState(u);
            uploads.remove(u.uploadId());
            List<StagedUpload> sidecars = new ArrayList<>();
            for (StagedUpload s : uploads.values()) {
                if (s.sidecar() && s.robotId().equals(u.robotId()) && s.recordingSha256().equals(u.sha256())
                        && StagedUpload.LANDED.equals(s.state())) {
                    sidecars.add(s);
                }
            }
            for (StagedUpload s : sidecars) {
                ingested.put(s.uploadId(), new IngestQueue.Outcome(outcome.recordingId(), outcome.episodes(),
                        outcome.frames(), mirror == null ? staging.landedFile(s).toUri().toString()
                                : mirror.uri(s)));
                staging.removeState(s);
                uploads.remove(s.uploadId());
            }
            if (mirror != null) { // the lake's copies are in the bucket: the spool's go
                sidecars.add(u);
                for (StagedUpload s : sidecars) {
                    try {
                        Files.deleteIfExists(staging.landedFile(s));
                    } catch (IOException e) {
                        log.accept("cannot remove the spooled copy " + staging.landedFile(s) + ": " + e.getMessage());
                    }
                }
            }
        }

        @Override
        public void failed(StagedUpload u, String message, boolean rejected) {
            List<StagedUpload> files = new ArrayList<>(List.of(u));
            if (rejected) { // with the recording, its sidecars leave the raw layer too
                for (StagedUpload s : uploads.values()) {
                    if (s.sidecar() && s.robotId().equals(u.robotId()) && s.recordingSha256().equals(u.sha256())
                            && StagedUpload.LANDED.equals(s.state())) {
                        files.add(s);
                    }
                }
            }
            for (StagedUpload s : files) {
                String at = s.landedPath();
                String why = s == u ? message : "its recording " + u.sha256() + " failed ingest: " + message;
                if (rejected) {
                    try {
                        if (mirror != null) {
                            mirror.reject(s);
                        }
                        at = staging.reject(s);
                        why += "; moved out of the raw layer to " + at;
                    } catch (IOException e) {
                        why += "; it stays at " + at + " (cannot move it to " + Staging.REJECTED + ": "
                                + e.getMessage() + ")";
                    }
                }
                StagedUpload f = s.withState(StagedUpload.INGEST_FAILED, at, why);
                staging.save(f);
                uploads.put(f.uploadId(), f);
            }
        }
    }
}
