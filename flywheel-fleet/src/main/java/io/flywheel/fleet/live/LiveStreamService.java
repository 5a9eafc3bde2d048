package io.flywheel.fleet.live;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;

import io.flywheel.fleet.upload.UploadIds;
import io.flywheel.fleet.upload.UploadLimits;
import io.flywheel.fleet.upload.UploadService;
import io.flywheel.fleet.v1.EpisodeDone;
import io.flywheel.fleet.v1.EpisodeOpened;
import io.flywheel.fleet.v1.ObservationAck;
import io.flywheel.fleet.v1.ObservationRequest;
import io.flywheel.fleet.v1.OpenEpisode;
import io.flywheel.fleet.v1.UploadStatus;
import io.flywheel.fleet.v1.Written;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;

/**
 * The gateway's {@code StreamObservations} RPC (gateway.proto documents the protocol and its status codes): live
 * episodes journaled as they arrive ({@link LiveJournal} under {@code <lake>/_staging/streams/<robot>/}), written as
 * MCAP at END ({@link LiveRecording}) and landed and ingested as uploads ({@link UploadService#land}).
 *
 * <p>One stream at a time may hold an episode (a second gets ABORTED). A message is journaled before the next one is
 * asked of gRPC (manual inbound flow control, as uploads), and acknowledged after 64 messages or 1 MiB, or 20 ms after
 * the first one not acknowledged yet (a timer thread, so a robot that pauses learns where it stands). The state of an
 * episode whose stream was cut stays in memory, so a resume in the same gateway does not read the journal again; a
 * gateway started later reads it (and cuts off a torn tail). Once landed, a small
 * {@code <stream-id>.done.json} stays in place of the journal: an OPEN of the episode answers with its landed file.
 *
 * <p>Quota: the journals of a robot's open episodes count against its quota with its unfinished uploads (both
 * ways: {@link UploadService#alsoStaged}); one episode's journal may not pass the maximum file size.
 */
public final class LiveStreamService implements AutoCloseable {
    /** The folder of live episodes' journals, relative to the lake root. */
    public static final String FOLDER = "_staging/streams";
    static final int ACK_EVERY_MESSAGES = 64;
    static final long ACK_EVERY_BYTES = 1 << 20;
    static final long ACK_DELAY_MS = 20;

    private static final ObjectMapper JSON = new ObjectMapper()
            .setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    /**
     * What {@code <stream-id>.done.json} holds: a landed live episode.
     *
     * @param robotId the robot
     * @param episodeId the robot's name of the episode
     * @param streamId its stream id
     * @param sha256 the landed MCAP's SHA-256
     * @param messages Observations in it
     * @param skippedFrames SkippedFrames in it
     * @param landedAtNs when it landed, ns since the Unix epoch
     */
    public record Landed(String robotId, String episodeId, String streamId, String sha256, long messages,
            long skippedFrames, long landedAtNs) {}

    private final UploadService uploads;
    private final UploadLimits limits;
    private final Path dir;
    private final ScheduledExecutorService acks;
    private final Set<String> active = ConcurrentHashMap.newKeySet();
    private final Map<String, LiveEpisodeState> idle = new ConcurrentHashMap<>();
    /** Stream id to its journal's bytes and robot, for the quota. */
    private final Map<String, long[]> journals = new ConcurrentHashMap<>();
    private final Map<String, String> robots = new ConcurrentHashMap<>();
    private final Set<Receiver> streams = ConcurrentHashMap.newKeySet();
    private final AtomicLong messages = new AtomicLong();
    private final AtomicLong skipped = new AtomicLong();
    private final AtomicLong bytesReceived = new AtomicLong();
    private final AtomicLong resent = new AtomicLong();
    private final AtomicLong landed = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();

    /**
     * Counts of the service since it started.
     *
     * @param open episodes with a stream now
     * @param unfinished episodes with a journal (streaming, cut or waiting for their robot)
     * @param messages Observations journaled
     * @param skippedFrames SkippedFrames journaled
     * @param bytesReceived journal bytes written
     * @param resent messages received again after a resume and dropped (journaled already)
     * @param landed episodes landed
     * @param refused streams ended with an error status
     */
    public record Stats(int open, int unfinished, long messages, long skippedFrames, long bytesReceived, long resent,
            long landed, long refused) {}

    /**
     * @param uploads lands the finished files (and counts the live journals against the quota)
     * @param limits message, file and quota limits
     */
    public LiveStreamService(UploadService uploads, UploadLimits limits) {
        this.uploads = uploads;
        this.limits = limits;
        this.dir = uploads.lakeRoot().resolve(FOLDER);
        this.acks = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "flywheel-live-acks");
            t.setDaemon(true);
            return t;
        });
        if (dir != null && Files.isDirectory(dir)) {
            try (DirectoryStream<Path> robotDirs = Files.newDirectoryStream(dir)) {
                for (Path r : robotDirs) {
                    try (DirectoryStream<Path> js = Files.newDirectoryStream(r, "*.journal")) {
                        for (Path j : js) {
                            String sid = j.getFileName().toString().replace(".journal", "");
                            journals.put(sid, new long[] {Files.size(j)});
                            robots.put(sid, r.getFileName().toString());
                        }
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the live episodes folder " + dir + ": " + e.getMessage(), e);
            }
        }
        uploads.alsoStaged(this::journalBytes);
    }

    /** @return the counts so far */
    public Stats stats() {
        return new Stats(active.size(), journals.size(), messages.get(), skipped.get(), bytesReceived.get(),
                resent.get(), landed.get(), refused.get());
    }

    /** @return the bytes of the robot's live journals */
    long journalBytes(String robot) {
        long n = 0;
        for (Map.Entry<String, long[]> e : journals.entrySet()) {
            if (robot.equals(robots.get(e.getKey()))) {
                n += e.getValue()[0];
            }
        }
        return n;
    }

    /** Ends every stream in flight with UNAVAILABLE; their journals stay, and the robots resume them later. */
    public void stopStreams() {
        for (Receiver r : streams) {
            r.stop();
        }
    }

    /** Stops the acknowledgement timer. */
    @Override
    public void close() {
        acks.shutdownNow();
    }

    /** {@code StreamObservations} of gateway.proto. */
    public StreamObserver<ObservationRequest> streamObservations(StreamObserver<ObservationAck> responseObserver) {
        ServerCallStreamObserver<ObservationAck> out = (ServerCallStreamObserver<ObservationAck>) responseObserver;
        out.disableAutoRequest();
        out.setOnCancelHandler(() -> { });
        Receiver r = new Receiver(out);
        streams.add(r);
        out.request(1);
        return r;
    }

    private static StatusRuntimeException invalid(String message) {
        return Status.INVALID_ARGUMENT.withDescription(message).asRuntimeException();
    }

    private static StatusRuntimeException exhausted(String message) {
        return Status.RESOURCE_EXHAUSTED.withDescription(message).asRuntimeException();
    }

    /** One StreamObservations stream; gRPC calls it one message at a time, the timer for delayed acks. */
    private final class Receiver implements StreamObserver<ObservationRequest> {
        private final ServerCallStreamObserver<ObservationAck> out;
        private String robot;
        private String streamId;
        private Path robotDir;
        private LiveEpisodeState state;
        private LiveJournal journal;
        private boolean holding;
        private boolean finished;
        private boolean done;
        private long ackedSeq;
        private int unackedMessages;
        private long unackedBytes;
        private boolean ackScheduled;

        Receiver(ServerCallStreamObserver<ObservationAck> out) {
            this.out = out;
        }

        @Override
        public synchronized void onNext(ObservationRequest req) {
            if (done) {
                return;
            }
            try {
                switch (req.getMessageCase()) {
                    case OPEN -> open(req);
                    case OBSERVATION, SKIPPED_FRAME -> message(req);
                    case END -> end(req);
                    default -> throw invalid("an ObservationRequest with none of open, observation, skipped_frame,"
                            + " end");
                }
            } catch (StatusRuntimeException e) {
                fail(e.getStatus());
            } catch (LiveJournal.JournalDamagedException e) {
                fail(Status.DATA_LOSS.withDescription("the journal of episode " + episode() + " is damaged: "
                        + e.getMessage() + "; it is kept as it is"));
            } catch (IOException | UncheckedIOException e) {
                fail(Status.INTERNAL.withDescription("live episode " + episode() + ": " + e.getMessage()
                        + "; the journal is kept: open the episode again to continue"));
            } catch (RuntimeException e) {
                fail(Status.INTERNAL.withDescription("live episode " + episode() + " failed: " + e));
            }
            if (!done) {
                out.request(1);
            }
        }

        @Override
        public synchronized void onError(Throwable t) { // the client cancelled or the connection broke
            done = true;
            release();
        }

        @Override
        public synchronized void onCompleted() {
            if (!done) {
                fail(Status.INVALID_ARGUMENT.withDescription(state == null ? "the stream ended before OPEN"
                        : "the stream ended before END, after seq " + state.lastSeq + "; the journal is kept: open"
                                + " episode " + episode() + " again to continue"));
            }
        }

        synchronized void stop() {
            if (!done) {
                done = true;
                release();
                out.onError(Status.UNAVAILABLE.withDescription("the gateway is stopping" + (state == null ? ""
                        : "; episode " + episode() + " is journaled up to seq " + state.lastSeq + ": open it again"
                                + " to continue")).asRuntimeException());
            }
        }

        private String episode() {
            return state == null ? "(not open)" : "'" + state.open.getEpisodeId() + "' of robot " + robot;
        }

        private void fail(Status s) {
            done = true;
            release();
            refused.incrementAndGet();
            out.onError(s.asRuntimeException());
        }

        private void release() {
            streams.remove(this);
            if (journal != null) {
                try {
                    journal.close();
                } catch (IOException ignored) {
                    // what was appended is in the file
                }
                journal = null;
            }
            if (holding) {
                if (state != null && !finished) {
                    idle.put(streamId, state);
                }
                active.remove(streamId);
                holding = false;
            }
        }

        private void open(ObservationRequest req) throws IOException {
            OpenEpisode o = req.getOpen();
            if (state != null || holding) {
                throw invalid("a second OPEN on one stream (one episode per StreamObservations stream)");
            }
            Status who = UploadService.callerRefusal(o.getRobotId());
            if (who != null) {
                throw who.asRuntimeException();
            }
            String bad = LiveEpisodeState.checkOpen(o);
            if (bad != null) {
                throw invalid(bad);
            }
            robot = o.getRobotId();
            String sid = UploadIds.streamId(robot, o.getEpisodeId());
            robotDir = dir.resolve(robot);
            Path doneFile = robotDir.resolve(sid + ".done.json");
            if (Files.isRegularFile(doneFile)) {
                Landed l = JSON.readValue(doneFile.toFile(), Landed.class);
                reply(answer(l));
                return;
            }
            if (!active.add(sid)) {
                throw Status.ABORTED.withDescription("episode '" + o.getEpisodeId() + "' of robot " + robot
                        + " is being streamed on another stream right now (" + sid + "); retry when it has ended")
                        .asRuntimeException();
            }
            streamId = sid;
            holding = true;
            Path jf = robotDir.resolve(sid + ".journal");
            LiveEpisodeState st = idle.remove(sid);
            if (st != null && Files.isRegularFile(jf) && Files.size(jf) >= st.journalBytes) {
                journal = LiveJournal.open(jf, null, st.journalBytes);
            } else if (Files.isRegularFile(jf)) {
                LiveEpisodeState[] rebuilt = new LiveEpisodeState[1];
                journal = LiveJournal.open(jf, r -> {
                    if (rebuilt[0] == null) {
                        if (!r.hasOpen()) {
                            throw new LiveJournal.JournalDamagedException(jf + ": the first record is not the OPEN");
                        }
                        rebuilt[0] = new LiveEpisodeState(r.getOpen(), sid);
                    }
                    rebuilt[0].apply(r, LiveJournal.recordBytes(r));
                }, 0);
                st = rebuilt[0];
                if (st == null) { // nothing complete in it: a journal whose OPEN was cut
                    journal.close();
                    journal = null;
                    Files.delete(jf);
                }
            }
            if (st == null) {
                long rec = LiveJournal.recordBytes(req);
                long staged = uploads.stagedBytes(robot) + journalBytes(robot);
                if (staged + rec > limits.robotQuotaBytes()) {
                    throw exhausted(quotaMessage(staged, rec));
                }
                Files.createDirectories(robotDir);
                journal = LiveJournal.create(jf, req);
                st = new LiveEpisodeState(o, sid);
                st.apply(req, journal.size());
            }
            journals.put(sid, new long[] {st.journalBytes});
            robots.put(sid, robot);
            state = st;
            if (!st.open.equals(o)) {
                throw invalid("episode '" + o.getEpisodeId() + "' of robot " + robot + " was opened with another"
                        + " OPEN (" + difference(st.open, o) + "); a resumed OPEN must equal the first");
            }
            ackedSeq = st.lastSeq;
            if (st.ended) { // END was journaled, landing was not done: do it now
                finish();
                return;
            }
            out.onNext(ObservationAck.newBuilder().setOpened(EpisodeOpened.newBuilder().setStreamId(sid)
                    .setNextSeq(st.lastSeq + 1).setMaxMessageBytes(limits.maxObservationBytes())).build());
        }

        private String quotaMessage(long staged, long rec) {
            return "robot " + robot + " has " + staged + " bytes staged in unfinished uploads and live episodes;"
                    + " " + rec + " bytes more would pass its quota of " + limits.robotQuotaBytes() + " bytes: end"
                    + " the episode or finish those uploads first";
        }

        private void message(ObservationRequest req) throws IOException {
            String kind = req.hasObservation() ? "Observation" : "SkippedFrame";
            if (state == null) {
                throw invalid(kind + " before OPEN: the first message of a stream is OPEN");
            }
            long seq = LiveEpisodeState.seqOf(req);
            if (seq != 0 && Long.compareUnsigned(seq, state.lastSeq) <= 0) {
                resent.incrementAndGet(); // sent again after a cut: journaled already
                return;
            }
            Status bad = state.check(req);
            if (bad != null) {
                throw bad.asRuntimeException();
            }
            if (req.hasObservation() && req.getObservation().getData().size() > limits.maxObservationBytes()) {
                throw exhausted("Observation seq " + seq + " on "
                        + state.channel(req.getObservation().getChannelId()).getTopic() + " is "
                        + req.getObservation().getData().size() + " bytes; the gateway takes messages of at most "
                        + limits.maxObservationBytes() + " bytes (EpisodeOpened.max_message_bytes)");
            }
            long rec = LiveJournal.recordBytes(req);
            if (state.journalBytes + rec > limits.maxFileBytes()) {
                throw exhausted("episode " + episode() + " would pass the gateway's maximum file size of "
                        + limits.maxFileBytes() + " bytes with seq " + seq + " (its journal holds " + state.journalBytes
                        + "): end it and go on in another episode");
            }
            long staged = uploads.stagedBytes(robot) + journalBytes(robot);
            if (staged + rec > limits.robotQuotaBytes()) {
                throw exhausted(quotaMessage(staged, rec));
            }
            uploads.throttle((int) rec);
            long size = journal.append(req);
            state.apply(req, rec);
            journals.put(streamId, new long[] {size});
            bytesReceived.addAndGet(rec);
            (req.hasObservation() ? messages : skipped).incrementAndGet();
            unackedMessages++;
            unackedBytes += rec;
            if (unackedMessages >= ACK_EVERY_MESSAGES || unackedBytes >= ACK_EVERY_BYTES) {
                ack();
            } else if (!ackScheduled) {
                ackScheduled = true;
                acks.schedule(this::delayedAck, ACK_DELAY_MS, TimeUnit.MILLISECONDS);
            }
        }

        private synchronized void delayedAck() {
            ackScheduled = false;
            if (!done && state != null) {
                ack();
            }
        }

        private void ack() {
            unackedMessages = 0;
            unackedBytes = 0;
            if (state.lastSeq > ackedSeq) {
                ackedSeq = state.lastSeq;
                out.onNext(ObservationAck.newBuilder().setWritten(Written.newBuilder().setAckedSeq(ackedSeq)).build());
            }
        }

        private void end(ObservationRequest req) throws IOException {
            if (state == null) {
                throw invalid("END before OPEN: the first message of a stream is OPEN");
            }
            long last = req.getEnd().getLastSeq();
            if (last != state.lastSeq) {
                throw invalid("END says last_seq " + Long.toUnsignedString(last) + "; the last seq received is "
                        + state.lastSeq + (Long.compareUnsigned(last, state.lastSeq) > 0 ? ": send seq "
                        + (state.lastSeq + 1) + ".." + Long.toUnsignedString(last) + " first" : ""));
            }
            long rec = LiveJournal.recordBytes(req);
            journal.append(req);
            state.apply(req, rec);
            finish();
        }

        /** Writes the MCAP from the journal, lands it, answers done. */
        private void finish() throws IOException {
            journal.force();
            journal.close();
            journal = null;
            Path jf = robotDir.resolve(streamId + ".journal");
            Path mcap = robotDir.resolve(streamId + ".mcap");
            LiveRecording.Written w = LiveRecording.write(jf, state.open, mcap, robot, streamId);
            String sha = io.flywheel.fleet.client.FleetClient.sha256(mcap);
            String episodeId = state.open.getEpisodeId();
            String name = (episodeId.matches("[A-Za-z0-9_-][A-Za-z0-9._-]{0,200}") ? episodeId : streamId) + ".mcap";
            uploads.land(robot, episodeId, name, mcap, sha);
            Landed l = new Landed(robot, episodeId, streamId, sha, w.messages(), w.skippedFrames(),
                    System.currentTimeMillis() * 1_000_000L);
            Path doneFile = robotDir.resolve(streamId + ".done.json");
            Path tmp = robotDir.resolve(streamId + ".done.json.tmp");
            Files.write(tmp, JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(l));
            try {
                Files.move(tmp, doneFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, doneFile, StandardCopyOption.REPLACE_EXISTING);
            }
            Files.deleteIfExists(jf);
            finished = true;
            journals.remove(streamId);
            robots.remove(streamId);
            landed.incrementAndGet();
            reply(answer(l));
        }

        private ObservationAck answer(Landed l) {
            UploadStatus u = uploads.statusOf(l.robotId(), l.sha256()).toBuilder().setEpisodeId(l.episodeId()).build();
            return ObservationAck.newBuilder().setDone(EpisodeDone.newBuilder().setUpload(u)
                    .setMessages(l.messages()).setSkippedFrames(l.skippedFrames())).build();
        }

        private void reply(ObservationAck a) {
            done = true;
            release();
            out.onNext(a);
            out.onCompleted();
        }
    }

    /** @return which part of two OPENs of one episode differs, in words */
    static String difference(OpenEpisode a, OpenEpisode b) {
        if (!a.getProfile().equals(b.getProfile())) {
            return "profile '" + a.getProfile() + "', now '" + b.getProfile() + "'";
        }
        if (!a.getChannelsList().equals(b.getChannelsList())) {
            return a.getChannelsCount() + " channel(s) " + a.getChannelsList().stream().map(c -> c.getId() + ":"
                    + c.getTopic()).toList() + ", now " + b.getChannelsCount() + " "
                    + b.getChannelsList().stream().map(c -> c.getId() + ":" + c.getTopic()).toList()
                    + (a.getChannelsCount() == b.getChannelsCount() ? " (encodings, schemas or metadata differ)" : "");
        }
        return "metadata " + new java.util.TreeMap<>(a.getMetadataMap()) + ", now "
                + new java.util.TreeMap<>(b.getMetadataMap());
    }
}
