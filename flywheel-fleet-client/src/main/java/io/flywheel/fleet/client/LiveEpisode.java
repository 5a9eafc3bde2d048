package io.flywheel.fleet.client;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.google.protobuf.ByteString;

import io.flywheel.fleet.v1.ChannelInfo;
import io.flywheel.fleet.v1.EndEpisode;
import io.flywheel.fleet.v1.EpisodeDone;
import io.flywheel.fleet.v1.EpisodeOpened;
import io.flywheel.fleet.v1.FleetGatewayGrpc;
import io.flywheel.fleet.v1.Observation;
import io.flywheel.fleet.v1.ObservationAck;
import io.flywheel.fleet.v1.ObservationRequest;
import io.flywheel.fleet.v1.OpenEpisode;
import io.flywheel.fleet.v1.SkippedFrame;
import io.flywheel.image.PerceptualHash;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;

/**
 * One episode streamed live to the gateway ({@code StreamObservations} of gateway.proto), opened by
 * {@link FleetClient#openEpisode}: the robot calls {@link #send} for every message and {@link #sendImage} for camera
 * frames (which the episode's {@link FrameFilter} may skip), then {@link #end}.
 *
 * <p>Messages are numbered (seq 1, 2, 3, ...) and kept in a bounded buffer until the gateway has journaled them;
 * {@link #send} blocks while the buffer is full ({@link LiveEpisodeSpec#maxBufferedMessages},
 * {@link LiveEpisodeSpec#maxBufferedBytes}): backpressure from a slow link or gateway reaches the recorder instead of
 * memory. A thread of the episode writes them to the stream as gRPC's flow control allows. When the stream fails
 * with a status worth retrying (UNAVAILABLE, ABORTED, CANCELLED, DEADLINE_EXCEEDED, or no acknowledgement within the
 * client's idle timeout), it opens the episode again after a backoff, and sends the buffered messages from the seq
 * the gateway names; the client's retry limit counts attempts in a row that journal nothing. Any other status fails
 * the episode: the next call throws {@link UploadFailedException} with it.
 *
 * <p>Checked here before anything is sent (an {@link IllegalArgumentException}; the episode goes on): a topic not
 * declared, a log time before the previous one of the same channel, a message larger than the gateway takes. Each
 * channel's MCAP sequence counts the frames offered on it, skipped ones included, so the file's sequence numbers show
 * where frames were skipped. Thread-safe; one episode per robot and episode id at a time.
 */
public final class LiveEpisode implements AutoCloseable {
    private static final Set<Status.Code> RETRY = EnumSet.of(Status.Code.UNAVAILABLE, Status.Code.ABORTED,
            Status.Code.CANCELLED, Status.Code.DEADLINE_EXCEEDED);

    private final FleetGatewayGrpc.FleetGatewayStub async;
    private final LiveEpisodeSpec spec;
    private final OpenEpisode open;
    private final FrameFilter filter;
    private final int maxAttempts;
    private final Duration initialBackoff;
    private final Duration maxBackoff;
    private final long idleTimeoutNs;
    private final Map<String, Integer> channelIds = new HashMap<>();
    private final Object lock = new Object();
    private final Thread sender;

    // guarded by lock
    private final List<ObservationRequest> buffer = new ArrayList<>();
    private int head;
    private long bufferedBytes;
    private long nextSeq = 1;
    private long ackedSeq;
    private long highestSent;
    private final Map<Integer, Long> lastLogTime = new HashMap<>();
    private final Map<Integer, Long> sequences = new HashMap<>();
    private int maxMessageBytes = 4 << 20;
    private boolean opened;
    private boolean endRequested;
    private Map<String, String> endMetadata = Map.of();
    private EpisodeDone result;
    private UploadFailedException failure;
    private boolean closed;
    private Attempt current;
    private long messagesOffered;
    private long bytesOffered;
    private long messagesSent;
    private long bytesSent;
    private long framesOffered;
    private long framesSkipped;
    private long bytesSkipped;
    private long bytesResent;
    private long wireBytes;
    private int reconnects;
    private long resumedFromSeq = 1;

    LiveEpisode(FleetGatewayGrpc.FleetGatewayStub async, LiveEpisodeSpec spec, int maxAttempts,
            Duration initialBackoff, Duration maxBackoff, Duration idleTimeout) {
        this.async = async;
        this.spec = spec;
        this.filter = spec.filter() == null ? null : spec.filter().copy();
        this.maxAttempts = maxAttempts;
        this.initialBackoff = initialBackoff;
        this.maxBackoff = maxBackoff;
        this.idleTimeoutNs = idleTimeout.toNanos();
        OpenEpisode.Builder ob = OpenEpisode.newBuilder().setRobotId(spec.robotId()).setEpisodeId(spec.episodeId())
                .setProfile(spec.profile()).putAllMetadata(spec.metadata());
        int id = 0;
        for (LiveEpisodeSpec.Channel c : spec.channels()) {
            id++;
            if (channelIds.putIfAbsent(c.topic(), id) != null) {
                throw new IllegalArgumentException("topic " + c.topic() + " is declared twice");
            }
            ob.addChannels(ChannelInfo.newBuilder().setId(id).setTopic(c.topic())
                    .setMessageEncoding(c.messageEncoding()).setSchemaName(c.schemaName())
                    .setSchemaEncoding(c.schemaEncoding()).setSchemaData(ByteString.copyFrom(c.schemaData()))
                    .putAllMetadata(c.metadata()));
        }
        this.open = ob.build();
        this.sender = new Thread(this::run, "flywheel-live-" + spec.episodeId());
        sender.setDaemon(true);
    }

    /** Starts the sender and waits until the gateway has taken the OPEN (or the episode failed). */
    void start() throws InterruptedException {
        sender.start();
        synchronized (lock) {
            while (!opened && failure == null && result == null) {
                lock.wait();
            }
            if (failure != null) {
                throw failure;
            }
        }
    }

    /** Same as {@link #send(String, long, long, byte[])} with the publish time equal to the log time. */
    public void send(String topic, long logTimeNs, byte[] data) throws InterruptedException {
        send(topic, logTimeNs, logTimeNs, data);
    }

    /**
     * Sends one message (an Observation), blocking while the buffer of unacknowledged messages is full.
     *
     * @param topic a declared topic
     * @param logTimeNs when the robot logged it, ns since the Unix epoch; per topic never before the previous one
     * @param publishTimeNs when it was published, ns (0 when unknown)
     * @param data the serialized message, in the channel's encoding
     * @throws IllegalArgumentException for an undeclared topic, a log time going backwards, a message too large
     * @throws UploadFailedException when the episode has failed (the gateway refused it, or the retries ran out)
     * @throws IllegalStateException after {@link #end} or {@link #close}
     */
    public void send(String topic, long logTimeNs, long publishTimeNs, byte[] data) throws InterruptedException {
        synchronized (lock) {
            int ch = admit(topic, logTimeNs, data.length);
            enqueue(ObservationRequest.newBuilder().setObservation(observation(ch, logTimeNs, publishTimeNs, data))
                    .build());
            messagesSent++;
            bytesSent += data.length;
        }
    }

    /**
     * Offers a camera frame by its encoded image (JPEG or PNG, hashed in pure Java by {@link FrameFilter#hash}):
     * sent as {@link #send} does, or, when the episode's filter finds it within its threshold of the last frame sent
     * on the topic, recorded as a skipped frame and not sent.
     *
     * @param message the message as recorded (e.g. a CDR {@code sensor_msgs/CompressedImage})
     * @param image the image inside it, what the filter hashes
     * @return whether the frame was sent
     * @throws IOException when the image cannot be decoded (nothing is sent)
     */
    public boolean sendImage(String topic, long logTimeNs, long publishTimeNs, byte[] message, byte[] image)
            throws IOException, InterruptedException {
        if (filter == null || filter.thresholdOf(topic) < 0) {
            return frame(topic, logTimeNs, publishTimeNs, message, false, 0);
        }
        java.util.OptionalLong h = FrameFilter.hash(image); // outside the lock: decoding takes a millisecond or two
        return frame(topic, logTimeNs, publishTimeNs, message, h.isPresent(), h.orElse(0));
    }

    /**
     * Offers a camera frame whose pHash the caller computed ({@link PerceptualHash}, e.g. from grey pixels with
     * {@link PerceptualHash#of}); otherwise as {@link #sendImage(String, long, long, byte[], byte[])}.
     *
     * @return whether the frame was sent
     */
    public boolean sendImage(String topic, long logTimeNs, long publishTimeNs, byte[] message, long phash)
            throws InterruptedException {
        return frame(topic, logTimeNs, publishTimeNs, message, true, phash);
    }

    /** A camera frame, through the filter when {@code filtered}. */
    private boolean frame(String topic, long logTimeNs, long publishTimeNs, byte[] message, boolean filtered,
            long phash) throws InterruptedException {
        synchronized (lock) {
            int ch = admit(topic, logTimeNs, message.length);
            framesOffered++;
            FrameFilter.Decision d = filter == null || !filtered ? null : filter.offer(topic, logTimeNs, phash);
            if (d == null || d.send()) {
                enqueue(ObservationRequest.newBuilder().setObservation(observation(ch, logTimeNs, publishTimeNs,
                        message)).build());
                messagesSent++;
                bytesSent += message.length;
                return true;
            }
            sequences.merge(ch, 1L, Long::sum);
            enqueue(ObservationRequest.newBuilder().setSkippedFrame(SkippedFrame.newBuilder().setSeq(nextSeq)
                    .setChannelId(ch).setLogTimeNs(logTimeNs).setRepeatsLogTimeNs(d.repeatsLogTimeNs())
                    .setHammingDistance(d.hammingDistance()).setThresholdBits(d.thresholdBits())).build());
            framesSkipped++;
            bytesSkipped += message.length;
            return false;
        }
    }

    /** Checks a message, waits for room in the buffer; returns its channel id. Holds the lock. */
    private int admit(String topic, long logTimeNs, int length) throws InterruptedException {
        usable();
        Integer ch = channelIds.get(topic);
        if (ch == null) {
            throw new IllegalArgumentException("topic " + topic + " is not a channel of episode " + spec.episodeId()
                    + " (declared: " + channelIds.keySet() + ")");
        }
        Long prev = lastLogTime.get(ch);
        if (prev != null && Long.compareUnsigned(logTimeNs, prev) < 0) {
            throw new IllegalArgumentException("log time " + Long.toUnsignedString(logTimeNs) + " ns on " + topic
                    + " is before the previous one, " + Long.toUnsignedString(prev) + " ns (per topic, log times"
                    + " never go backwards on a live stream)");
        }
        if (length > maxMessageBytes) {
            throw new IllegalArgumentException("a " + length + "-byte message on " + topic + " is larger than the "
                    + maxMessageBytes + " bytes the gateway takes");
        }
        while (buffer.size() - head >= spec.maxBufferedMessages()
                || (buffer.size() > head && bufferedBytes + length > spec.maxBufferedBytes())) {
            lock.wait();
            usable();
        }
        lastLogTime.put(ch, logTimeNs);
        messagesOffered++;
        bytesOffered += length;
        return ch;
    }

    private void usable() {
        if (failure != null) {
            throw failure;
        }
        if (result != null) {
            throw new IllegalStateException("episode " + spec.episodeId() + " has landed already, as "
                    + result.getUpload().getLandedPath());
        }
        if (endRequested || closed) {
            throw new IllegalStateException("episode " + spec.episodeId() + " is " + (closed ? "closed" : "ended"));
        }
    }

    private Observation observation(int ch, long logTimeNs, long publishTimeNs, byte[] data) {
        long sequence = sequences.merge(ch, 1L, Long::sum);
        return Observation.newBuilder().setSeq(nextSeq).setChannelId(ch).setLogTimeNs(logTimeNs)
                .setPublishTimeNs(publishTimeNs).setSequence((int) sequence).setData(ByteString.copyFrom(data)).build();
    }

    private void enqueue(ObservationRequest r) {
        buffer.add(r);
        bufferedBytes += r.getSerializedSize();
        nextSeq++;
        lock.notifyAll();
    }

    /**
     * Ends the episode: waits until every message is journaled, sends END and waits for the gateway's answer (the
     * MCAP landed: sha256, state, counts).
     *
     * @param metadata episode metadata known only now (e.g. "outcome"), over the spec's
     * @return the gateway's answer and what was sent
     * @throws UploadFailedException when the episode failed
     */
    public Result end(Map<String, String> metadata) throws InterruptedException {
        synchronized (lock) {
            if (result == null) {
                usable();
            }
            endRequested = true;
            endMetadata = Map.copyOf(metadata);
            lock.notifyAll();
            while (result == null && failure == null) {
                lock.wait();
            }
            if (failure != null) {
                throw failure;
            }
            return new Result(result, stats());
        }
    }

    /** Same as {@link #end(Map)} without metadata. */
    public Result end() throws InterruptedException {
        return end(Map.of());
    }

    /**
     * How a live episode ended.
     *
     * @param done the gateway's answer: the landed file as an upload ({@code done.getUpload()}: sha256, state,
     *     landed_path), messages and skipped frames in it
     * @param stats what this client sent
     */
    public record Result(EpisodeDone done, LiveStats stats) {}

    /** @return the counts so far */
    public LiveStats stats() {
        synchronized (lock) {
            return new LiveStats(messagesOffered, bytesOffered, messagesSent, bytesSent, framesOffered, framesSkipped,
                    bytesSkipped, bytesResent, wireBytes, reconnects, ackedSeq, resumedFromSeq);
        }
    }

    /**
     * Stops streaming without END, when the episode has not ended: the stream is cancelled and the gateway keeps the
     * journal, which a later {@link FleetClient#openEpisode} of the same episode continues. Does nothing after
     * {@link #end}.
     */
    @Override
    public void close() throws InterruptedException {
        synchronized (lock) {
            if (result != null || failure != null || closed) {
                return;
            }
            closed = true;
            if (current != null) {
                current.req.cancel("the robot closed the episode", null);
            }
            lock.notifyAll();
        }
        sender.join();
    }

    // ------------------------------------------------------------------ the sender thread

    /** One stream of the episode. */
    private final class Attempt implements ClientResponseObserver<ObservationRequest, ObservationAck> {
        ClientCallStreamObserver<ObservationRequest> req;
        EpisodeOpened openedAck;
        Status error;
        long sentUpTo;
        boolean endSent;
        boolean progress;
        long lastProgressNs = System.nanoTime();

        @Override
        public void beforeStart(ClientCallStreamObserver<ObservationRequest> requestStream) {
            req = requestStream;
            requestStream.setOnReadyHandler(() -> {
                synchronized (lock) {
                    lock.notifyAll();
                }
            });
        }

        @Override
        public void onNext(ObservationAck a) {
            synchronized (lock) {
                switch (a.getMessageCase()) {
                    case OPENED -> openedAck = a.getOpened();
                    case WRITTEN -> acknowledged(this, a.getWritten().getAckedSeq());
                    case DONE -> {
                        result = a.getDone();
                        if (a.getDone().getMessages() + a.getDone().getSkippedFrames() == nextSeq - 1) {
                            ackedSeq = nextSeq - 1; // landed: every message is in the file
                        }
                    }
                    default -> error = Status.INTERNAL.withDescription("unexpected answer from the gateway: " + a);
                }
                lock.notifyAll();
            }
        }

        @Override
        public void onError(Throwable t) {
            synchronized (lock) {
                error = Status.fromThrowable(t);
                lock.notifyAll();
            }
        }

        @Override
        public void onCompleted() {
            synchronized (lock) {
                if (result == null) {
                    error = Status.INTERNAL.withDescription("the gateway ended the stream without an answer");
                }
                lock.notifyAll();
            }
        }
    }

    /** The gateway has journaled every seq up to {@code seq}. Holds the lock. */
    private void acknowledged(Attempt a, long seq) {
        if (seq <= ackedSeq) {
            return;
        }
        ackedSeq = seq;
        while (head < buffer.size() && seqOf(buffer.get(head)) <= seq) {
            bufferedBytes -= buffer.get(head).getSerializedSize();
            buffer.set(head, null);
            head++;
        }
        if (head > 1024 && head * 2 > buffer.size()) {
            buffer.subList(0, head).clear();
            head = 0;
        }
        a.progress = true;
        a.lastProgressNs = System.nanoTime();
        lock.notifyAll();
    }

    private static long seqOf(ObservationRequest r) {
        return r.hasObservation() ? r.getObservation().getSeq() : r.getSkippedFrame().getSeq();
    }

    private void run() {
        int failed = 0;
        Duration backoff = initialBackoff;
        while (true) {
            Attempt a = new Attempt();
            Status s;
            try {
                s = stream(a);
            } catch (InterruptedException e) {
                s = Status.CANCELLED.withDescription("interrupted");
            } catch (RuntimeException e) {
                s = Status.INTERNAL.withDescription(e.toString());
            }
            synchronized (lock) {
                current = null;
                if (s == null || closed || failure != null) {
                    lock.notifyAll();
                    return;
                }
                failed = a.progress ? 1 : failed + 1;
                String tls = TransportErrors.tlsProblem(s);
                if (tls != null) {
                    failure = new UploadFailedException(s.getCode(), "live episode " + spec.episodeId() + " of robot "
                            + spec.robotId() + ": " + tls, s.asRuntimeException(), reconnects + 1, true);
                    lock.notifyAll();
                    return;
                }
                if (!RETRY.contains(s.getCode()) || failed >= maxAttempts) {
                    failure = new UploadFailedException(s.getCode(), "live episode " + spec.episodeId() + " of robot "
                            + spec.robotId() + ": " + TransportErrors.describe(s)
                            + (RETRY.contains(s.getCode()) ? " (gave up after " + failed
                            + " attempt(s) in a row without progress)" : ""), s.asRuntimeException(), reconnects + 1,
                            !RETRY.contains(s.getCode()));
                    lock.notifyAll();
                    return;
                }
                if (a.progress) {
                    backoff = initialBackoff;
                }
                long wait = backoff.toMillis() + (long) (backoff.toMillis() * 0.2 * Math.random());
                reconnects++;
                long until = System.currentTimeMillis() + wait;
                try {
                    while (!closed && System.currentTimeMillis() < until) {
                        lock.wait(Math.max(1, until - System.currentTimeMillis()));
                    }
                } catch (InterruptedException e) {
                    failure = new UploadFailedException(Status.Code.CANCELLED, "live episode " + spec.episodeId()
                            + ": interrupted", e, reconnects + 1, false);
                    lock.notifyAll();
                    return;
                }
                backoff = backoff.multipliedBy(2).compareTo(maxBackoff) > 0 ? maxBackoff : backoff.multipliedBy(2);
            }
        }
    }

    /** @return null when the episode is done, else the status that ended this stream */
    private Status stream(Attempt a) throws InterruptedException {
        async.streamObservations(a);
        synchronized (lock) {
            current = a;
            if (closed) {
                a.req.cancel("closed", null);
                return Status.CANCELLED;
            }
        }
        ObservationRequest o = ObservationRequest.newBuilder().setOpen(open).build();
        a.req.onNext(o);
        synchronized (lock) {
            wireBytes += o.getSerializedSize();
            Status s = await(a, () -> a.openedAck != null);
            if (s != null || result != null) {
                return result != null ? null : s;
            }
            EpisodeOpened op = a.openedAck;
            long next = op.getNextSeq();
            maxMessageBytes = op.getMaxMessageBytes();
            if (!opened && nextSeq == 1 && next > 1) { // a journal left by an earlier process of the robot
                nextSeq = next;
                resumedFromSeq = next;
                ackedSeq = next - 1;
            }
            if (next - 1 < ackedSeq || next > nextSeq) {
                a.req.cancel("journal mismatch", null);
                return Status.DATA_LOSS.withDescription("the gateway's journal of episode " + spec.episodeId()
                        + " ends at seq " + (next - 1) + "; this client had " + ackedSeq + " acknowledged and "
                        + (nextSeq - 1) + " sent");
            }
            acknowledged(a, next - 1);
            a.sentUpTo = next - 1;
            opened = true;
            lock.notifyAll();
        }
        while (true) {
            ObservationRequest out;
            synchronized (lock) {
                Status s = await(a, () -> closed || a.req.isReady() && (a.sentUpTo < nextSeq - 1
                        || endRequested && !a.endSent));
                if (s != null || result != null) {
                    return result != null ? null : s;
                }
                if (closed) {
                    a.req.cancel("the robot closed the episode", null);
                    return Status.CANCELLED;
                }
                if (ackedSeq >= a.sentUpTo && !a.endSent) {
                    a.lastProgressNs = System.nanoTime(); // nothing was waiting for an answer: the idle clock starts
                }
                if (a.sentUpTo < nextSeq - 1) {
                    out = buffer.get(head + (int) (a.sentUpTo - ackedSeq));
                    long seq = a.sentUpTo + 1;
                    if (seq <= highestSent && out.hasObservation()) {
                        bytesResent += out.getObservation().getData().size();
                    }
                    highestSent = Math.max(highestSent, seq);
                    a.sentUpTo = seq;
                } else {
                    out = ObservationRequest.newBuilder().setEnd(EndEpisode.newBuilder().setLastSeq(nextSeq - 1)
                            .putAllMetadata(endMetadata)).build();
                    a.endSent = true;
                }
                wireBytes += out.getSerializedSize();
            }
            a.req.onNext(out);
        }
    }

    /**
     * Waits (holding the lock) until {@code ready} holds, the stream failed or the episode is done; cancels the
     * stream when the gateway has not acknowledged anything for the idle timeout while something waits for it.
     *
     * @return the stream's error, or null
     */
    private Status await(Attempt a, java.util.function.BooleanSupplier ready) throws InterruptedException {
        while (true) {
            if (a.error != null) {
                return a.error;
            }
            if (result != null || ready.getAsBoolean()) {
                return null;
            }
            boolean waiting = a.openedAck == null || ackedSeq < a.sentUpTo || a.endSent;
            if (waiting && System.nanoTime() - a.lastProgressNs > idleTimeoutNs) {
                a.req.cancel("no answer from the gateway", null);
                return Status.DEADLINE_EXCEEDED.withDescription("no answer from the gateway in "
                        + idleTimeoutNs / 1_000_000_000L + " s");
            }
            lock.wait(50);
        }
    }
}
