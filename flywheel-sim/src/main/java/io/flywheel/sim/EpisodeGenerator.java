package io.flywheel.sim;

import io.flywheel.ros.Ros2Schemas;
import io.flywheel.ros.cdr.CdrWriter;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Generates one episode: draws its realism knobs from the episode's own random source, writes its
 * messages in log-time order (as a recorder receives them) to an {@link EpisodeSink}, and returns
 * its ground truth. One generator per worker thread (it holds the renderer and the JPEG encoder).
 *
 * <p>Topics (ROS 2, CDR): {@code /head_camera/image_raw/compressed},
 * {@code /left_wrist_camera/image_raw/compressed}, {@code /right_wrist_camera/image_raw/compressed}
 * (sensor_msgs/msg/CompressedImage, 30 Hz), {@code /joint_states} (sensor_msgs/msg/JointState,
 * 200 Hz, 16 joints), {@code /teleop/command} (std_msgs/msg/Float64MultiArray, 50 Hz, 16 values:
 * 14 joint targets in rad and 2 gripper targets in m), {@code /task} (std_msgs/msg/String, once at
 * the start) and {@code /outcome} (std_msgs/msg/String, once at the end); plus a Metadata record
 * "episode".
 */
public final class EpisodeGenerator implements AutoCloseable {
    public static final String[] CAMERAS = {"head_camera", "left_wrist_camera", "right_wrist_camera"};
    public static final long CAMERA_PERIOD_NS = 33_333_333L;
    public static final long JOINT_PERIOD_NS = 5_000_000L;
    public static final long COMMAND_PERIOD_NS = 20_000_000L;
    public static final String JOINT_TOPIC = "/joint_states";
    public static final String COMMAND_TOPIC = "/teleop/command";
    public static final String TASK_TOPIC = "/task";
    public static final String OUTCOME_TOPIC = "/outcome";

    /** @return the image topic of a camera, e.g. "/head_camera/image_raw/compressed" */
    public static String cameraTopic(String camera) {
        return "/" + camera + "/image_raw/compressed";
    }

    private final SimOptions options;
    private final Renderer renderer;
    private final JpegEncoder jpeg;
    private final CdrWriter cdr = new CdrWriter(1 << 16);

    /**
     * @param options fleet options (resolution, rates, JPEG settings)
     */
    public EpisodeGenerator(SimOptions options) {
        this.options = options;
        this.renderer = new Renderer(options.width(), options.height());
        this.jpeg = JpegEncoder.create(options.jpegEncoder(), options.jpegQuality());
    }

    /** @return the JPEG encoder's name */
    public String encoderName() {
        return jpeg.name();
    }

    @Override
    public void close() {
        jpeg.close();
    }

    private static final String QOS_VOLATILE = "- history: 3\n  depth: 0\n  reliability: 1\n  durability: 2\n"
            + "  deadline:\n    sec: 2147483647\n    nsec: 4294967295\n  lifespan:\n    sec: 2147483647\n    nsec: 4294967295\n"
            + "  liveliness: 1\n  liveliness_lease_duration:\n    sec: 2147483647\n    nsec: 4294967295\n"
            + "  avoid_ros_namespace_conventions: false\n";
    private static final String QOS_LATCHED = QOS_VOLATILE.replace("durability: 2", "durability: 1");

    /** Per-stream timing drawn up front, so the result does not depend on write order. */
    private static final class StreamPlan {
        final String topic;
        final String device;
        final long offset;
        final long jitterMax;
        final long latMin;
        final long latMax;
        final long start;
        final long period;
        final int count;
        final int[] deviation;
        final boolean[] dropped;
        final long[] stamp;
        final long[] logTime;
        int channel;

        StreamPlan(String topic, String device, long offset, long jitterMax, long latMin, long latMax, long start,
                   long period, int count, double expSigma, double dropRate, boolean bursts, SplittableRandom rng) {
            this.topic = topic;
            this.device = device;
            this.offset = offset;
            this.jitterMax = jitterMax;
            this.latMin = latMin;
            this.latMax = latMax;
            this.start = start;
            this.period = period;
            this.count = count;
            deviation = new int[expSigma > 0 ? count : 0];
            dropped = new boolean[count];
            stamp = new long[count];
            logTime = new long[count];
            for (int k = 0; k < count; k++) {
                if (expSigma > 0) {
                    deviation[k] = (int) Math.max(-3 * expSigma, Math.min(3 * expSigma, rng.nextGaussian() * expSigma));
                }
                long t = trueTime(k);
                stamp[k] = t + offset + (jitterMax == 0 ? 0 : rng.nextLong(-jitterMax, jitterMax + 1));
                logTime[k] = t + rng.nextLong(latMin, latMax + 1);
                if (rng.nextDouble() < dropRate) {
                    dropped[k] = true;
                }
            }
            if (bursts && count > 20 && rng.nextDouble() < 0.15) {
                int len = 3 + rng.nextInt(6);
                int at = rng.nextInt(count - len);
                for (int k = at; k < at + len; k++) {
                    dropped[k] = true;
                }
            }
        }

        long trueTime(int k) {
            return start + k * period + (deviation.length == 0 ? 0 : deviation[k]);
        }

        GroundTruth.Stream truth() {
            int n = 0;
            for (boolean d : dropped) {
                n += d ? 1 : 0;
            }
            int[] idx = new int[n];
            n = 0;
            for (int k = 0; k < count; k++) {
                if (dropped[k]) {
                    idx[n++] = k;
                }
            }
            return new GroundTruth.Stream(topic, device, offset, jitterMax, latMin, latMax, start, period, count,
                    deviation, idx);
        }
    }

    /**
     * Generates one episode into {@code sink} (which it does not close).
     *
     * @param spec the planned episode
     * @param sink where the records go
     * @return the episode's ground truth; {@code bytes} is 0 (the caller knows the file size)
     * @throws IOException when the sink fails
     */
    public GroundTruth.Episode generate(EpisodeSpec spec, EpisodeSink sink) throws IOException {
        SplittableRandom rng = new SplittableRandom(spec.noiseSeed());
        long t0 = spec.startNs();
        long dur = spec.durationNs();
        boolean dup = spec.duplicateGroup() >= 0;

        // Blurry and static stretches (not in near-duplicates, which must stay aligned).
        List<GroundTruth.Interval> statics = new ArrayList<>();
        List<GroundTruth.Interval> blurry = new ArrayList<>();
        double u1 = rng.nextDouble();
        double u2 = rng.nextDouble();
        double s1 = rng.nextDouble();
        double s2 = rng.nextDouble();
        double b1 = rng.nextDouble();
        double b2 = rng.nextDouble();
        if (!dup && u1 < 0.3) {
            long len = (long) (Math.min(0.15 * dur, (0.6 + 0.9 * s1) * 1e9));
            long at = (long) ((0.15 + 0.6 * s2) * dur);
            statics.add(new GroundTruth.Interval("static", t0 + at, t0 + at + len));
        }
        if (!dup && u2 < 0.3) {
            long len = (long) (Math.min(0.15 * dur, (0.3 + 0.7 * b1) * 1e9));
            long at = (long) ((0.05 + 0.8 * b2) * dur);
            blurry.add(new GroundTruth.Interval("blurry", t0 + at, t0 + at + len));
        }
        long staticTotal = 0;
        for (GroundTruth.Interval i : statics) {
            staticTotal += i.endNs() - i.startNs();
        }
        Demonstration demo = new Demonstration(spec, (dur - staticTotal) / 1e9, rng);

        // Device clocks: the robot's offsets plus a small per-episode drift.
        Map<String, Long> offsets = new LinkedHashMap<>();
        for (String d : FleetPlan.DEVICES) {
            long base = spec.clockOffsetsNs().get(d);
            offsets.put(d, d.equals("arm_controller") ? base : base + rng.nextLong(-20_000, 20_001));
        }
        StreamPlan[] cams = new StreamPlan[3];
        for (int c = 0; c < 3; c++) {
            long start = t0 + rng.nextLong(0, CAMERA_PERIOD_NS);
            int count = (int) ((t0 + dur - start) / CAMERA_PERIOD_NS);
            cams[c] = new StreamPlan(cameraTopic(CAMERAS[c]), CAMERAS[c], offsets.get(CAMERAS[c]), 150_000, 4_000_000,
                    9_000_000, start, CAMERA_PERIOD_NS, count, 60_000, options.frameDropRate(), true, rng);
        }
        long jstart = t0 + rng.nextLong(0, JOINT_PERIOD_NS);
        StreamPlan joints = new StreamPlan(JOINT_TOPIC, "arm_controller", offsets.get("arm_controller"), 20_000, 300_000,
                800_000, jstart, JOINT_PERIOD_NS, (int) ((t0 + dur - jstart) / JOINT_PERIOD_NS), 0,
                options.messageDropRate(), false, rng);
        long cstart = t0 + rng.nextLong(0, COMMAND_PERIOD_NS);
        // Float64MultiArray has no header: commands carry no device stamp, only the recorder's log time.
        StreamPlan commands = new StreamPlan(COMMAND_TOPIC, "teleop", 0, 0, 1_000_000,
                3_000_000, cstart, COMMAND_PERIOD_NS, (int) ((t0 + dur - cstart) / COMMAND_PERIOD_NS), 0,
                options.messageDropRate(), false, rng);
        double cmdNoise = 0.002;

        // Schemas and channels, as rosbag2 registers them.
        int sImg = sink.registerSchema(Ros2Schemas.COMPRESSED_IMAGE_NAME, Ros2Schemas.ENCODING, utf8(Ros2Schemas.COMPRESSED_IMAGE));
        int sJs = sink.registerSchema(Ros2Schemas.JOINT_STATE_NAME, Ros2Schemas.ENCODING, utf8(Ros2Schemas.JOINT_STATE));
        int sArr = sink.registerSchema(Ros2Schemas.FLOAT64_MULTI_ARRAY_NAME, Ros2Schemas.ENCODING, utf8(Ros2Schemas.FLOAT64_MULTI_ARRAY));
        int sStr = sink.registerSchema(Ros2Schemas.STRING_NAME, Ros2Schemas.ENCODING, utf8(Ros2Schemas.STRING));
        Map<String, String> qos = Map.of("offered_qos_profiles", QOS_VOLATILE);
        for (StreamPlan c : cams) {
            c.channel = sink.registerChannel(c.topic, Ros2Schemas.MESSAGE_ENCODING, sImg, qos);
        }
        joints.channel = sink.registerChannel(JOINT_TOPIC, Ros2Schemas.MESSAGE_ENCODING, sJs, qos);
        commands.channel = sink.registerChannel(COMMAND_TOPIC, Ros2Schemas.MESSAGE_ENCODING, sArr, qos);
        Map<String, String> latched = Map.of("offered_qos_profiles", QOS_LATCHED);
        int chTask = sink.registerChannel(TASK_TOPIC, Ros2Schemas.MESSAGE_ENCODING, sStr, latched);
        int chOutcome = sink.registerChannel(OUTCOME_TOPIC, Ros2Schemas.MESSAGE_ENCODING, sStr, latched);

        // Events in log-time order: (logTime, stream, k); ties broken by stream then k.
        StreamPlan[] streams = {cams[0], cams[1], cams[2], joints, commands};
        int total = 0;
        for (StreamPlan s : streams) {
            total += s.count;
        }
        long[] keys = new long[total];
        long[] times = new long[total];
        int n = 0;
        for (int si = 0; si < streams.length; si++) {
            for (int k = 0; k < streams[si].count; k++) {
                if (!streams[si].dropped[k]) {
                    times[n] = streams[si].logTime[k];
                    keys[n] = ((long) si << 32) | k;
                    n++;
                }
            }
        }
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        final long[] ft = times;
        final long[] fk = keys;
        Arrays.sort(order, (a, b) -> ft[a] != ft[b] ? Long.compare(ft[a], ft[b]) : Long.compare(fk[a], fk[b]));

        long messages = 0;
        cdr.reset().string(spec.task());
        sink.writeMessage(chTask, 0, t0, t0, cdr.array(), 0, cdr.size());
        messages++;

        Renderer.State state = new Renderer.State();
        state.scene = spec.scene();
        state.lighting = spec.lighting();
        state.object = spec.object();
        System.arraycopy(demo.bin, 0, state.bin, 0, 3);
        state.markers = markers(spec.scene());
        double[] q = new double[16];
        double[] qa = new double[16];
        double[] qb = new double[16];
        double[] vel = new double[16];
        double[] eff = new double[16];
        long[] staticArr = new long[statics.size() * 2];
        for (int i = 0; i < statics.size(); i++) {
            staticArr[2 * i] = statics.get(i).startNs();
            staticArr[2 * i + 1] = statics.get(i).endNs();
        }
        for (int oi = 0; oi < n; oi++) {
            int e = order[oi];
            int si = (int) (keys[e] >>> 32);
            int k = (int) keys[e];
            StreamPlan s = streams[si];
            long trueT = s.trueTime(k);
            double tau = tau(trueT, t0, staticArr);
            cdr.reset();
            // The bodies live in small methods so the JIT compiles them quickly (an OSR compile of
            // one huge loop cost seconds of CPU on one core).
            if (si < 3) {
                cameraMessage(demo, state, spec, blurry, s, si, k, trueT, tau);
            } else if (si == 3) {
                jointMessage(demo, spec, s, k, trueT, tau, t0, staticArr, q, qa, qb, vel, eff);
            } else {
                commandMessage(demo, spec, k, trueT, t0, staticArr, q, cmdNoise);
            }
            sink.writeMessage(s.channel, k, s.logTime[k], s.logTime[k], cdr.array(), 0, cdr.size());
            messages++;
        }
        long end = t0 + dur;
        String outcome = spec.failed() ? "failure: " + spec.failureCause() : "success";
        cdr.reset().string(outcome);
        sink.writeMessage(chOutcome, 0, end, end, cdr.array(), 0, cdr.size());
        messages++;

        Map<String, String> meta = new LinkedHashMap<>();
        meta.put("episode_id", spec.episodeId());
        meta.put("robot_id", spec.robotId());
        meta.put("scene", spec.scene().name());
        meta.put("lighting", spec.lighting().name());
        meta.put("task", spec.task());
        meta.put("operator", spec.operator());
        meta.put("object", spec.object().name());
        meta.put("outcome", spec.outcome());
        meta.put("failure_cause", spec.failed() ? spec.failureCause() : "");
        meta.put("start_time_ns", Long.toString(t0));
        meta.put("duration_ns", Long.toString(dur));
        meta.put("simulator", "flywheel-sim");
        sink.writeMetadata("episode", meta);

        List<GroundTruth.Interval> phases = new ArrayList<>();
        for (int p = 0; p < Demonstration.PHASES.length; p++) {
            phases.add(new GroundTruth.Interval(Demonstration.PHASES[p], realTime(demo.phaseStart[p], t0, staticArr),
                    realTime(demo.phaseStart[p + 1], t0, staticArr)));
        }
        Map<String, GroundTruth.Stream> camTruth = new LinkedHashMap<>();
        for (int c = 0; c < 3; c++) {
            camTruth.put(CAMERAS[c], cams[c].truth());
        }
        return new GroundTruth.Episode(spec.episodeId(), spec.file(), spec.robotId(), spec.scene().name(),
                spec.lighting().name(), spec.operator(), spec.object().name(), spec.object().transparent(),
                spec.object().reflective() && !spec.object().transparent(), spec.task(), spec.outcome(),
                spec.failureCause(), t0, dur, spec.duplicateGroup(), phases, blurry, statics, camTruth,
                joints.truth(), commands.truth(), messages, 0);
    }

    /** Renders, blurs, noises and encodes camera {@code si}'s frame {@code k} into {@link #cdr}. */
    private void cameraMessage(Demonstration demo, Renderer.State state, EpisodeSpec spec,
            List<GroundTruth.Interval> blurry, StreamPlan s, int si, int k, long trueT, double tau) {
        renderFrame(demo, state, si, tau);
        boolean blur = false;
        for (GroundTruth.Interval b : blurry) {
            blur |= trueT >= b.startNs() && trueT < b.endNs();
        }
        if (blur) {
            renderer.blur(Math.max(2, options.width() / 40));
        }
        renderer.noise(spec.lighting().noise(), FleetPlan.mix(spec.noiseSeed(), 10 + si, k));
        byte[] img = jpeg.encode(renderer.bgr, renderer.width, renderer.height);
        cdr.header(s.stamp[k], s.device + "_optical_frame").string("jpeg").byteSequence(img, 0, img.length);
    }

    /** Encodes joint state {@code k} into {@link #cdr}. */
    private void jointMessage(Demonstration demo, EpisodeSpec spec, StreamPlan s, int k, long trueT, double tau,
            long t0, long[] staticArr, double[] q, double[] qa, double[] qb, double[] vel, double[] eff) {
        demo.positions(tau, q);
        demo.positions(tau(trueT - 1_000_000, t0, staticArr), qa);
        demo.positions(tau(trueT + 1_000_000, t0, staticArr), qb);
        SplittableRandom jr = new SplittableRandom(FleetPlan.mix(spec.noiseSeed(), 20, k));
        boolean holding = demo.holding(tau);
        for (int j = 0; j < 16; j++) {
            vel[j] = (qb[j] - qa[j]) / 0.002;
            boolean gripper = j == 7 || j == 15;
            q[j] += jr.nextGaussian() * (gripper ? 2e-5 : 1e-4);
            eff[j] = gripper ? 0 : 0.05 * jr.nextGaussian();
        }
        for (int arm = 0; arm < 2; arm++) {
            int o = arm * 8;
            boolean active = (arm == 0) == demo.leftActive;
            double load = 1.6 + (active && holding ? 0.3 : 0);
            eff[o + 1] += 9.81 * load * 0.35 * Math.cos(q[o + 1]);
            eff[o + 3] += 9.81 * load * 0.18 * Math.cos(q[o + 1] + q[o + 3]);
            if (active && holding) {
                eff[o + 7] = 12.0 + 0.2 * jr.nextGaussian();
            }
        }
        cdr.header(s.stamp[k], "").stringSequence(Demonstration.JOINT_NAMES)
                .float64Sequence(q).float64Sequence(vel).float64Sequence(eff);
    }

    /** Encodes joint command {@code k} into {@link #cdr}. */
    private void commandMessage(Demonstration demo, EpisodeSpec spec, int k, long trueT, long t0, long[] staticArr,
            double[] q, double cmdNoise) {
        double lookahead = tau(trueT + 60_000_000, t0, staticArr);
        demo.positions(lookahead, q);
        SplittableRandom cr = new SplittableRandom(FleetPlan.mix(spec.noiseSeed(), 30, k));
        for (int j = 0; j < 16; j++) {
            if (j == 7 || j == 15) {
                q[j] = q[j] < Demonstration.GRIPPER_OPEN - 0.01 ? 0.0 : Demonstration.GRIPPER_OPEN;
            } else {
                q[j] += cr.nextGaussian() * cmdNoise;
            }
        }
        cdr.int32(1).string("joints").int32(16).int32(16).int32(0).float64Sequence(q);
    }

    /** Motion time (s) at true time t: elapsed time minus the static stretches before t. */
    static double tau(long t, long t0, long[] statics) {
        long el = t - t0;
        for (int i = 0; i < statics.length; i += 2) {
            long a = statics[i];
            long b = statics[i + 1];
            if (t > a) {
                el -= Math.min(t, b) - a;
            }
        }
        return Math.max(0, el) / 1e9;
    }

    /** Inverse of {@link #tau}: the first true time with the given motion time. */
    static long realTime(double tau, long t0, long[] statics) {
        long t = t0 + Math.round(tau * 1e9);
        for (int i = 0; i < statics.length; i += 2) {
            if (t > statics[i]) {
                t += statics[i + 1] - statics[i];
            }
        }
        return t;
    }

    private final double[] ee = new double[3];
    private final double[] pos = new double[3];
    private final double[] fwd = new double[3];
    private static final double[] HEAD_POS = {-0.15, 0, 0.85};
    private static final double[] HEAD_FWD = {0.70, 0, -0.85};
    private static final double[] Z = {0, 0, 1};
    private static final double[] X = {1, 0, 0};

    private void renderFrame(Demonstration demo, Renderer.State s, int camera, double tau) {
        double[] active = demo.leftActive ? s.leftEe : s.rightEe;
        double[] idle = demo.leftActive ? s.rightEe : s.leftEe;
        demo.activeEffector(tau, active);
        demo.idleEffector(tau, idle);
        double g = demo.activeGripper(tau);
        s.leftGripper = demo.leftActive ? g : Demonstration.GRIPPER_OPEN;
        s.rightGripper = demo.leftActive ? Demonstration.GRIPPER_OPEN : g;
        demo.objectPosition(tau, active, s.objectPos);
        if (camera == 0) {
            renderer.camera(HEAD_POS, HEAD_FWD, Z);
            renderer.draw(s, 0);
        } else {
            double[] e = camera == 1 ? s.leftEe : s.rightEe;
            System.arraycopy(e, 0, ee, 0, 3);
            pos[0] = ee[0] - 0.05;
            pos[1] = ee[1];
            pos[2] = ee[2] + 0.14;
            fwd[0] = 0.45;
            fwd[1] = 0;
            fwd[2] = -1;
            renderer.camera(pos, fwd, X);
            renderer.draw(s, camera);
        }
    }

    private static double[][] markers(Catalog.Scene scene) {
        SplittableRandom r = new SplittableRandom(scene.name().hashCode());
        double[][] m = new double[6][];
        for (int i = 0; i < m.length; i++) {
            m[i] = new double[] {0.2 + r.nextDouble() * 0.7, -0.6 + r.nextDouble() * 1.2, 0.03 + r.nextDouble() * 0.06,
                    r.nextInt(256), r.nextInt(256), r.nextInt(256)};
        }
        return m;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
