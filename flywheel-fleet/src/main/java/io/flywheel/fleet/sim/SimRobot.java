package io.flywheel.fleet.sim;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.fleet.client.FleetClient;
import io.flywheel.fleet.client.UploadFailedException;
import io.flywheel.fleet.client.UploadListener;
import io.flywheel.fleet.client.UploadResult;
import io.flywheel.fleet.client.UploadSpec;
import io.flywheel.fleet.v1.FileKind;
import io.flywheel.fleet.v1.UploadState;
import io.flywheel.fleet.v1.UploadStatus;
import io.flywheel.rows.TelemetryRow;
import io.flywheel.sim.EpisodeGenerator;
import io.flywheel.sim.EpisodeSink;
import io.flywheel.sim.EpisodeSpec;
import io.flywheel.sim.GroundTruth;
import io.flywheel.sim.McapEpisodeSink;
import io.grpc.StatusRuntimeException;

/**
 * One robot of a {@link LiveFleet}: a recorder thread that lives the robot's day on its own clock and an uploader
 * thread that sends each recording to the gateway as soon as it is finished.
 *
 * <p>The recorder generates the robot's episodes one after the other with the fleet simulator, paced so that robot
 * time runs {@link LiveFleetOptions#speed()} times as fast as wall time (each message is written when its log time
 * is due; the idle gaps between episodes pass the same way), and publishes while it lives: a heartbeat every second,
 * joint temperatures every 2 s and the battery every 5 s (QoS 0), safety alerts during episodes (QoS 1:
 * {@code grasp_failed} in every failed episode, {@code estop} in 15% of the episodes) and an audit record at the end
 * of each episode (QoS 2: {@code billing}, the robot seconds recorded). Every message carries the robot's clock in
 * {@code ts_ns} and a message id {@code <robot>-<day>-<counter>}, unique per robot as the payload format wants:
 * {@code <day>} is 8 hex digits of a hash of the robot's seed and planned episodes, so another fleet (another seed,
 * other options) never reuses an id, and the same fleet run again publishes the same messages with the same ids (the
 * gateway keeps one row of each, as it keeps one copy of each recording). Faults
 * ({@link Faults}) are drawn from the robot's own random sources, in the same order whatever the threads do.
 */
final class SimRobot {
    static final long HEARTBEAT_NS = 1_000_000_000L;
    static final long JOINT_TEMP_NS = 2_000_000_000L;
    static final long BATTERY_NS = 5_000_000_000L;
    static final double ESTOP_RATE = 0.15;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Recorded DONE = new Recorded(null, null, 0);

    /** A finished recording, handed from the recorder to the uploader. */
    private record Recorded(EpisodeSpec spec, Path file, long bytes) {}

    /** A message planned for a moment of an episode. */
    private record Planned(long tNs, int order, String messageClass, String kind, int qos, Map<String, Double> values,
            String text, boolean duplicate, boolean cutAfter) {}

    /** Counts shared by the robots of a run, for progress. */
    static final class Counters {
        final AtomicLong recorded = new AtomicLong();
        final AtomicLong uploaded = new AtomicLong();
        final AtomicLong bytesUploaded = new AtomicLong();
        final AtomicLong published = new AtomicLong();
        final AtomicLong uploadCuts = new AtomicLong();
        final AtomicLong mqttCuts = new AtomicLong();
    }

    private final LiveFleetOptions o;
    private final String robotId;
    private final List<EpisodeSpec> episodes;
    private final Counters counters;
    private final FleetClient client;
    private final CuttableLink grpcLink;
    private final RobotMqtt mqtt;
    private final SplittableRandom telemetryRng;
    private final SplittableRandom faultRng;
    private final SplittableRandom uploadRng;
    private final long dayStartNs;
    private final long dayEndNs;
    private final String day;
    private final BlockingQueue<Recorded> recordings = new LinkedBlockingQueue<>();

    // the recorder's state (recorder thread only)
    private final PriorityQueue<Planned> planned = new PriorityQueue<>((a, b) -> a.tNs() != b.tNs()
            ? Long.compare(a.tNs(), b.tNs()) : Integer.compare(a.order(), b.order()));
    private long wall0;
    private long robotNowNs;
    private long nextHeartbeatNs;
    private long nextJointTempNs;
    private long nextBatteryNs;
    private long counter;
    private int plannedOrder;
    private double soc;
    private double jointTempC;
    private String recording;
    private long duplicatesInjected;
    /** A fleet stream message planned for a moment of an episode (protobuf bytes at QoS 1). */
    private record StreamPlanned(long tNs, int order, String topic, byte[] payload) {}

    /**
     * What really happened in an episode, for the stream's labels: e-stop, operator interventions, an empty grasp
     * (the failed episodes: the gripper closed on nothing), the task's success signal; and the label the default
     * labelling rules must give (precedence e-stop &gt; intervention &gt; empty grasp &gt; success signal).
     */
    record StreamTruth(String robotId, String episodeId, String streamOutcome, String rule, boolean eStop,
            int interventions, boolean emptyGrasp, boolean successSignal) {}

    static final double INTERVENTION_RATE = 0.10;
    private final SplittableRandom streamRng;
    private final PriorityQueue<StreamPlanned> streamPlanned = new PriorityQueue<>((a, b) -> a.tNs() != b.tNs()
            ? Long.compare(a.tNs(), b.tNs()) : Integer.compare(a.order(), b.order()));
    /** the stream's ground truth of each episode recorded, by its index in the fleet (with stream events on) */
    final Map<Integer, StreamTruth> streamTruth = new java.util.TreeMap<>();

    /** the ground truth of each episode recorded, by its index in the fleet */
    final Map<Integer, GroundTruth.Episode> truth = new java.util.TreeMap<>();
    final List<LiveFleetReport.Message> messages = new ArrayList<>();
    long unacknowledged;
    long recordWallNanos;

    // the uploader's results (uploader thread only; failures from both, through failures(String))
    final List<LiveFleetReport.Episode> outcomes = new ArrayList<>();
    final List<String> failures = new ArrayList<>();
    long bytesSent;
    long uploadsResumed;
    long alreadyInLake;

    /**
     * @param o the run's options
     * @param robotId the robot
     * @param episodes its episodes, in time order
     * @param seed the robot's seed (from the fleet seed and the robot's index)
     * @param counters the run's shared counts
     * @param mqtt its MQTT session, or null for no telemetry
     */
    SimRobot(LiveFleetOptions o, String robotId, List<EpisodeSpec> episodes, long seed, Counters counters,
            RobotMqtt mqtt) {
        this.o = o;
        this.robotId = robotId;
        this.episodes = episodes;
        this.counters = counters;
        this.mqtt = mqtt;
        SplittableRandom root = new SplittableRandom(seed);
        this.telemetryRng = root.split();
        this.faultRng = root.split();
        this.uploadRng = root.split();
        this.streamRng = root.split(); // split last: the other sources draw as they did before the stream existed
        this.dayStartNs = episodes.get(0).startNs();
        EpisodeSpec last = episodes.get(episodes.size() - 1);
        this.dayEndNs = last.startNs() + last.durationNs();
        this.day = day(seed, episodes);
        String[] hp = LiveFleetOptions.hostPort(o.gateway());
        this.grpcLink = o.faults().cut() > 0 ? CuttableLink.start(hp[0], Integer.parseInt(hp[1]), robotId + "-grpc")
                : null;
        this.client = FleetClient.builder(grpcLink != null ? grpcLink.target() : o.gateway())
                .token(o.tokens().get(robotId)).chunkBytes(o.chunkBytes())
                .backoff(Duration.ofMillis(50), Duration.ofSeconds(2)).build();
    }

    String robotId() {
        return robotId;
    }

    /** @return 8 hex digits of SHA-256 over the robot's seed and its episodes' ids, starts and durations */
    static String day(long seed, List<EpisodeSpec> episodes) {
        java.security.MessageDigest md = io.flywheel.fleet.upload.UploadIds.sha256();
        StringBuilder b = new StringBuilder().append(seed);
        for (EpisodeSpec e : episodes) {
            b.append('/').append(e.episodeId()).append(':').append(e.startNs()).append(':').append(e.durationNs());
        }
        md.update(b.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return java.util.HexFormat.of().formatHex(md.digest()).substring(0, 8);
    }

    /** @return robot time of the robot's day, ns: its first episode's start to its last one's end */
    long dayNanos() {
        return dayEndNs - dayStartNs;
    }

    /**
     * Asks the gateway for a state with the robot's token until the gateway takes the token (a running gateway reads
     * tokens issued since it started again within a second or so of seeing an unknown one).
     *
     * @param timeout the longest wait
     * @return null when the gateway answered, else why not (its status and message)
     */
    String probe(Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (true) {
            try {
                client.status(robotId, "0".repeat(64));
                return null;
            } catch (StatusRuntimeException e) {
                String why = e.getStatus().getCode() + (e.getStatus().getDescription() == null ? ""
                        : ": " + e.getStatus().getDescription());
                if (e.getStatus().getCode() != io.grpc.Status.Code.UNAUTHENTICATED || System.nanoTime() > end) {
                    return why;
                }
                Thread.sleep(200);
            }
        }
    }

    // ------------------------------------------------------------------ the recorder

    /** Lives the robot's day: records every episode, publishing as it goes; then waits for the broker's acks. */
    void record() throws IOException, InterruptedException {
        wall0 = System.nanoTime();
        robotNowNs = dayStartNs;
        nextHeartbeatNs = dayStartNs;
        nextJointTempNs = dayStartNs;
        nextBatteryNs = dayStartNs;
        soc = 0.7 + 0.3 * telemetryRng.nextDouble();
        jointTempC = 30 + 5 * telemetryRng.nextDouble();
        try (EpisodeGenerator gen = new EpisodeGenerator(o.fleet())) {
            for (EpisodeSpec spec : episodes) {
                advance(spec.startNs());
                recording = spec.episodeId();
                plan(spec);
                Path target = o.fleet().outDir().resolve(spec.file());
                McapEpisodeSink mcap = McapEpisodeSink.open(target, o.fleet());
                GroundTruth.Episode ep;
                boolean ok = false;
                try {
                    ep = gen.generate(spec, paced(mcap));
                    mcap.close();
                    ok = true;
                } finally {
                    if (!ok) {
                        mcap.abort();
                    }
                }
                advance(spec.startNs() + spec.durationNs());
                recording = null;
                long size = Files.size(target);
                truth.put(spec.index(), ep.withBytes(size));
                counters.recorded.incrementAndGet();
                recordings.put(new Recorded(spec, target, size));
            }
        } finally {
            recordings.put(DONE);
            recordWallNanos = System.nanoTime() - wall0;
        }
        if (mqtt != null) {
            unacknowledged = mqtt.awaitAcknowledged(Duration.ofSeconds(30));
            if (unacknowledged > 0) {
                failures(robotId + ": " + unacknowledged + " QoS 1/2 message(s) not acknowledged by the broker within"
                        + " 30 s of the last episode");
            }
        }
    }

    private synchronized void failures(String f) {
        failures.add(f);
    }

    /** @return a sink that advances the robot's clock to each message's log time before writing it */
    private EpisodeSink paced(McapEpisodeSink mcap) {
        return new EpisodeSink() {
            @Override
            public int registerSchema(String name, String encoding, byte[] data) throws IOException {
                return mcap.registerSchema(name, encoding, data);
            }

            @Override
            public int registerChannel(String topic, String encoding, int schemaId, Map<String, String> metadata)
                    throws IOException {
                return mcap.registerChannel(topic, encoding, schemaId, metadata);
            }

            @Override
            public void writeMessage(int channelId, long sequence, long logTime, long publishTime, byte[] data,
                    int offset, int length) throws IOException {
                advance(logTime);
                mcap.writeMessage(channelId, sequence, logTime, publishTime, data, offset, length);
            }

            @Override
            public void writeMetadata(String name, Map<String, String> metadata) throws IOException {
                mcap.writeMetadata(name, metadata);
            }

            @Override
            public void close() {
                // the recorder closes the MCAP file itself
            }
        };
    }

    /** Plans an episode's alerts, its audit record and its faults (in a fixed order of draws). */
    private void plan(EpisodeSpec spec) {
        if (mqtt == null) {
            return;
        }
        long t0 = spec.startNs();
        long dur = spec.durationNs();
        List<Planned> qos12 = new ArrayList<>();
        if (spec.failed()) {
            long t = t0 + (long) (dur * (0.4 + 0.3 * telemetryRng.nextDouble()));
            qos12.add(new Planned(t, plannedOrder++, TelemetryRow.ALERT, "grasp_failed", 1,
                    values("gripper_opening_m", round(0.002 * telemetryRng.nextDouble(), 4)),
                    spec.failureCause() + " (" + spec.object().name().toLowerCase(Locale.ROOT) + ")", false, false));
        }
        long estopAt = -1;
        if (telemetryRng.nextDouble() < ESTOP_RATE) {
            long t = t0 + (long) (dur * (0.1 + 0.8 * telemetryRng.nextDouble()));
            estopAt = t;
            qos12.add(new Planned(t, plannedOrder++, TelemetryRow.ALERT, "estop", 1,
                    values("speed_mps", round(0.05 + 0.45 * telemetryRng.nextDouble(), 3)),
                    "e-stop pressed by " + spec.operator(), false, false));
        }
        qos12.add(new Planned(t0 + dur, plannedOrder++, TelemetryRow.AUDIT, "billing", 2,
                values("robot_seconds", dur / 1e9, "episode_index", spec.index()), spec.episodeId(), false, false));
        for (int i = 0; i < qos12.size(); i++) {
            Planned p = qos12.get(i);
            if (p.qos() == 1 && faultRng.nextDouble() < o.faults().duplicate()) {
                qos12.set(i, withFlags(p, true, p.cutAfter()));
            }
        }
        if (faultRng.nextDouble() < o.faults().reconnect()) {
            int i = faultRng.nextInt(qos12.size());
            qos12.set(i, withFlags(qos12.get(i), qos12.get(i).duplicate(), true));
        }
        planned.addAll(qos12);
        if (o.streamEvents()) {
            planStream(spec, estopAt);
        }
    }

    /**
     * Plans an episode's fleet stream: STARTED at its start, one ObservationSummary per second (10 gripper samples,
     * published when its second is over), ENDED at its end. The gripper opens (0.9) until the grasp at 20-35% of the
     * episode; a failed episode closes on nothing (opening 0.02, 0.1-0.2 N) for 60-70% of it (at least 0.6 s) and
     * opens again, any other holds its object (opening 0.03, 4-6 N) to the end and raises the success signal in its
     * last second; 10% of the episodes have one operator intervention.
     */
    private void planStream(EpisodeSpec spec, long estopAt) {
        long t0 = spec.startNs();
        long dur = spec.durationNs();
        String ep = spec.episodeId();
        String base = "fleet/" + robotId + "/stream/";
        boolean intervention = streamRng.nextDouble() < INTERVENTION_RATE;
        long interventionAt = t0 + (long) (dur * (0.2 + 0.6 * streamRng.nextDouble()));
        long graspAt = t0 + (long) (dur * (0.2 + 0.15 * streamRng.nextDouble()));
        long missEnd = graspAt + Math.max(600_000_000L, (long) (dur * (0.6 + 0.1 * streamRng.nextDouble())));
        double hold = 4 + 2 * streamRng.nextDouble();
        boolean failed = spec.failed();
        streamPlanned.add(new StreamPlanned(t0, plannedOrder++, base + "episode", io.flywheel.fleet.v1.EpisodeEvent
                .newBuilder().setRobotId(robotId).setEpisodeId(ep).setKind(io.flywheel.fleet.v1.EpisodeEvent.Kind.STARTED)
                .setTimeNs(t0).setTask(spec.task() == null ? "" : spec.task()).build().toByteArray()));
        long period = 100_000_000L;
        int seconds = (int) Math.max(1, (dur + 999_999_999L) / 1_000_000_000L);
        for (int sec = 0; sec < seconds; sec++) {
            long from = t0 + sec * 1_000_000_000L;
            long to = Math.min(t0 + dur, from + 1_000_000_000L);
            io.flywheel.fleet.v1.ObservationSummary.Builder b = io.flywheel.fleet.v1.ObservationSummary.newBuilder()
                    .setRobotId(robotId).setEpisodeId(ep).setTimeNs(from).setSamplePeriodNs(period);
            for (long t = from; t < to; t += period) {
                float opening;
                float force;
                if (t < graspAt) {
                    opening = 0.9f;
                    force = 0f;
                } else if (failed) {
                    boolean closed = t < missEnd;
                    opening = closed ? 0.02f : 0.9f;
                    force = closed ? (float) (0.1 + 0.1 * streamRng.nextDouble()) : 0f;
                } else {
                    opening = 0.03f;
                    force = (float) (hold + 0.2 * streamRng.nextGaussian());
                }
                b.addGripperOpening(opening).addGripperForceN(force);
            }
            b.setSuccessSignal(!failed && sec == seconds - 1);
            b.setInterventions(intervention && interventionAt >= from && interventionAt < to ? 1 : 0);
            streamPlanned.add(new StreamPlanned(to, plannedOrder++, base + "observation", b.build().toByteArray()));
        }
        streamPlanned.add(new StreamPlanned(t0 + dur, plannedOrder++, base + "episode", io.flywheel.fleet.v1.EpisodeEvent
                .newBuilder().setRobotId(robotId).setEpisodeId(ep).setKind(io.flywheel.fleet.v1.EpisodeEvent.Kind.ENDED)
                .setTimeNs(t0 + dur).setTask(spec.task() == null ? "" : spec.task()).build().toByteArray()));
        boolean estop = estopAt >= 0;
        String outcome = estop || failed ? "failure" : intervention ? "needs_review" : "success";
        if (intervention && !estop) {
            outcome = "needs_review";
        }
        String rule = estop ? "e_stop" : intervention ? "intervention" : failed ? "empty_grasp" : "success_signal";
        streamTruth.put(spec.index(), new StreamTruth(robotId, ep, outcome, rule, estop, intervention ? 1 : 0, failed,
                !failed));
    }

    private static Planned withFlags(Planned p, boolean duplicate, boolean cutAfter) {
        return new Planned(p.tNs(), p.order(), p.messageClass(), p.kind(), p.qos(), p.values(), p.text(), duplicate,
                cutAfter);
    }

    /** Moves the robot's clock to {@code t}: publishes what is due on the way, at its moment. */
    private void advance(long t) {
        while (mqtt != null) {
            long next = Math.min(Math.min(nextHeartbeatNs, nextJointTempNs), nextBatteryNs);
            Planned p = planned.peek();
            StreamPlanned sp = streamPlanned.peek();
            if (sp != null && sp.tNs() <= t && sp.tNs() <= next && (p == null || sp.tNs() <= p.tNs())) {
                pace(sp.tNs());
                streamPlanned.poll();
                mqtt.publishStream(sp.topic(), sp.payload());
                continue;
            }
            if (p != null && p.tNs() <= next) {
                if (p.tNs() > t) {
                    break;
                }
                pace(p.tNs());
                planned.poll();
                fire(p);
                continue;
            }
            if (next > t || next > dayEndNs) {
                break;
            }
            pace(next);
            if (next == nextHeartbeatNs) {
                publish(TelemetryRow.TELEMETRY, "heartbeat", 0, next, values("uptime_s", (next - dayStartNs) / 1e9,
                        "recording", recording != null ? 1 : 0), null);
                nextHeartbeatNs += HEARTBEAT_NS;
            } else if (next == nextJointTempNs) {
                double target = recording != null ? 52 : 34;
                jointTempC += (target - jointTempC) * 0.08 + telemetryRng.nextGaussian() * 0.2;
                publish(TelemetryRow.TELEMETRY, "joint_temp", 0, next, values("max_c", round(jointTempC + 3, 2),
                        "mean_c", round(jointTempC, 2)), null);
                nextJointTempNs += JOINT_TEMP_NS;
            } else {
                soc = Math.max(0.05, soc - (recording != null ? 0.0004 : 0.0001) * (BATTERY_NS / 1e9));
                publish(TelemetryRow.TELEMETRY, "battery", 0, next, values("soc_pct", round(100 * soc, 2),
                        "voltage", round(44 + 10 * soc, 2), "current", recording != null ? -6.5 : -1.2), null);
                nextBatteryNs += BATTERY_NS;
            }
        }
        pace(t);
    }

    private void fire(Planned p) {
        String id = publish(p.messageClass(), p.kind(), p.qos(), p.tNs(), p.values(), p.text());
        messages.add(new LiveFleetReport.Message(robotId, id, p.qos(), topic(p.messageClass(), p.kind()), p.tNs(),
                recording, p.duplicate()));
        if (p.duplicate()) { // the same message again, same id: a robot retrying after a lost PUBACK
            mqtt.publish(topic(p.messageClass(), p.kind()), p.qos(), payload(id, p.tNs(), p.values(), p.text()));
            counters.published.incrementAndGet();
            duplicatesInjected++;
        }
        if (p.cutAfter()) {
            mqtt.cut();
            counters.mqttCuts.incrementAndGet();
        }
    }

    private String publish(String messageClass, String kind, int qos, long tNs, Map<String, Double> values,
            String text) {
        String id = String.format(Locale.ROOT, "%s-%s-%06d", robotId, day, ++counter);
        mqtt.publish(topic(messageClass, kind), qos, payload(id, tNs, values, text));
        counters.published.incrementAndGet();
        return id;
    }

    private String topic(String messageClass, String kind) {
        return "fleet/" + robotId + "/" + messageClass + "/" + kind;
    }

    /** @return the payload of {@code telemetry.schema.json} */
    static String payload(String id, long tNs, Map<String, Double> values, String text) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("message_id", id);
        m.put("ts_ns", tNs);
        m.put("values", values);
        if (text != null) {
            m.put("text", text);
        }
        try {
            return JSON.writeValueAsString(m);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Map<String, Double> values(Object... kv) {
        Map<String, Double> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], ((Number) kv[i + 1]).doubleValue());
        }
        return m;
    }

    private static double round(double v, int digits) {
        double f = Math.pow(10, digits);
        return Math.round(v * f) / f;
    }

    /** Waits until wall time catches up with robot time {@code t} (no wait at speed 0). */
    private void pace(long t) {
        if (t <= robotNowNs) {
            return;
        }
        robotNowNs = t;
        if (o.speed() <= 0) {
            return;
        }
        long due = wall0 + (long) ((t - dayStartNs) / o.speed());
        long ahead = due - System.nanoTime();
        if (ahead > 1_000_000L) { // below a millisecond a sleep costs more than it keeps
            LockSupport.parkNanos(ahead);
        }
    }

    long duplicatesInjected() {
        return duplicatesInjected;
    }

    long[] published() {
        return mqtt == null ? new long[3] : mqtt.published();
    }

    long mqttCuts() {
        return mqtt == null ? 0 : mqtt.cuts();
    }

    long reconnects() {
        return mqtt == null ? 0 : mqtt.reconnects();
    }

    long inFlightAtCuts() {
        return mqtt == null ? 0 : mqtt.inFlightAtCuts();
    }

    long uploadCuts() {
        return grpcLink == null ? 0 : grpcLink.cuts();
    }

    // ------------------------------------------------------------------ the uploader

    /** Uploads each recording as soon as it is finished; at the end waits for their ingest. */
    void upload() throws InterruptedException, IOException {
        List<Integer> landed = new ArrayList<>();
        for (Recorded r; (r = recordings.take()) != DONE; ) {
            boolean cutDrawn = uploadRng.nextDouble() < o.faults().cut();
            long cutAt = (long) (r.bytes() * (0.1 + 0.8 * uploadRng.nextDouble()));
            long cutsBefore = uploadCuts();
            if (cutDrawn) {
                grpcLink.cutAfter(cutAt);
            }
            EpisodeSpec s = r.spec();
            long endNs = s.startNs() + s.durationNs();
            try {
                UploadResult u = client.upload(r.file(), UploadSpec.of(robotId, s.episodeId(), FileKind.MCAP),
                        UploadListener.NONE);
                long resumedAt = u.attempts() > 1 ? u.resumedFrom() : -1;
                boolean cut = uploadCuts() > cutsBefore;
                if (cut) {
                    counters.uploadCuts.incrementAndGet();
                }
                bytesSent += u.bytesSent();
                if (resumedAt > 0) {
                    uploadsResumed++;
                }
                boolean already = u.status().getAlreadyInLake();
                alreadyInLake += already ? 1 : 0;
                outcomes.add(new LiveFleetReport.Episode(robotId, s.episodeId(), r.file(), u.sha256(), u.sizeBytes(),
                        s.startNs(), endNs, u.status().getState().name(), u.attempts(), cut, resumedAt, ""));
                if (!already) {
                    landed.add(outcomes.size() - 1);
                }
                counters.uploaded.incrementAndGet();
                counters.bytesUploaded.addAndGet(u.sizeBytes());
            } catch (UploadFailedException e) {
                outcomes.add(new LiveFleetReport.Episode(robotId, s.episodeId(), r.file(), FleetClient.sha256(r.file()),
                        r.bytes(), s.startNs(), endNs, "REFUSED", 0, uploadCuts() > cutsBefore, -1, e.getMessage()));
                failures("upload of " + s.episodeId() + " by " + robotId + " failed: " + e.getMessage());
            } finally {
                if (grpcLink != null) {
                    grpcLink.disarm();
                }
            }
        }
        if (o.waitForIngest()) {
            long end = System.nanoTime() + o.ingestTimeout().toNanos();
            for (int i : landed) {
                LiveFleetReport.Episode e = outcomes.get(i);
                UploadStatus st;
                try {
                    st = client.awaitIngested(robotId, e.sha256(),
                            Duration.ofNanos(Math.max(0, end - System.nanoTime())));
                } catch (StatusRuntimeException x) {
                    failures(e.episodeId() + " of " + robotId + ": landed; its ingest state is unknown: "
                            + x.getStatus().getCode() + " " + x.getStatus().getDescription());
                    continue;
                }
                String error = st.getState() == UploadState.INGEST_FAILED ? st.getMessage() : "";
                if (!error.isEmpty()) {
                    failures(e.episodeId() + " of " + robotId + ": landed, but ingest failed: " + error);
                } else if (st.getState() != UploadState.INGESTED) {
                    failures(e.episodeId() + " of " + robotId + ": not ingested within "
                            + o.ingestTimeout().toSeconds() + " s (" + st.getState() + ")");
                }
                outcomes.set(i, new LiveFleetReport.Episode(e.robotId(), e.episodeId(), e.file(), e.sha256(),
                        e.bytes(), e.startNs(), e.endNs(), st.getState().name(), e.attempts(), e.cut(), e.resumedAt(),
                        error));
            }
        }
    }

    /** Closes the robot's connections (its MQTT session stays with the broker). */
    void close() {
        if (mqtt != null) {
            mqtt.close();
        }
        client.close();
        if (grpcLink != null) {
            grpcLink.close();
        }
    }
}
