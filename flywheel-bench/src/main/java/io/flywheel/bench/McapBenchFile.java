package io.flywheel.bench;

import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.awt.image.DataBufferByte;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.stream.Collectors;

import javax.imageio.IIOImage;
import javax.imageio.ImageIO;
import javax.imageio.ImageWriteParam;
import javax.imageio.ImageWriter;
import javax.imageio.stream.MemoryCacheImageOutputStream;

import io.flywheel.mcap.McapWriter;
import io.flywheel.ros.Ros2Schemas;
import io.flywheel.ros.cdr.CdrWriter;

/**
 * Writes the MCAP read benchmark's recording with Flywheel's {@link McapWriter}: a realistic ROS 2
 * robot log of three {@code sensor_msgs/msg/CompressedImage} cameras at 30 Hz (real-encoder JPEGs of
 * about 40 KB), {@code sensor_msgs/msg/JointState} at 200 Hz (16 joints: name, position, velocity,
 * effort) and {@code std_msgs/msg/Float64MultiArray} commands at 50 Hz (14 values), in zstd chunks
 * of 4 MiB with message indexes, chunk indexes, statistics and summary offsets. Optionally an
 * uncompressed twin holding the same records (compression {@code ""}).
 *
 * <p>The JPEG pool (default 100 frames per camera) is made from the real 640x480 robot camera stills
 * in {@code shared/data/camera} (widowx-tictactoe, xarm, apc2016, arc2017): each frame is a panned
 * crop of a still, rescaled to 640x480, with a brightness change and sensor-like noise, encoded by
 * ImageIO at the quality that brings it closest to the target size. Every message then gets a JPEG
 * COM segment of 16 random bytes right after SOI, so no two payloads are equal and zstd cannot
 * dedupe frames inside a chunk; the JPEGs stay valid.
 *
 * <p>Deterministic for a given seed and inputs. Usage:
 * <pre>
 * McapBenchFile --camera-dir shared/data/camera --out robot_zstd.mcap [--out-none robot_none.mcap]
 *               [--duration 275] [--seed 1] [--chunk-size 4194304] [--level 3] [--jpeg-kb 40] [--pool 100]
 * </pre>
 * Prints one JSON line describing the file(s) and writes it to {@code OUT.gen.json}.
 */
public final class McapBenchFile {
    private McapBenchFile() {}

    static final long START_NS = 1_732_867_200L * 1_000_000_000L; // 2024-11-29T08:00:00Z

    /** One camera: topic, frame id, pool sources, timing phase. */
    private record Camera(String topic, String frameId, String pool, long phaseNs) {}

    public static void main(String[] args) throws Exception {
        Map<String, String> a = Args.parse(args);
        Path cameraDir = Path.of(Args.required(a, "camera-dir"));
        Path out = Path.of(a.getOrDefault("out", "robot_zstd.mcap"));
        Path outNone = a.containsKey("out-none") ? Path.of(a.get("out-none")) : null;
        double duration = Double.parseDouble(a.getOrDefault("duration", "275"));
        long seed = Long.parseLong(a.getOrDefault("seed", "1"));
        long chunkSize = Long.parseLong(a.getOrDefault("chunk-size", String.valueOf(4L << 20)));
        int level = Integer.parseInt(a.getOrDefault("level", "3"));
        int jpegBytes = (int) (Double.parseDouble(a.getOrDefault("jpeg-kb", "40")) * 1000);
        int poolSize = Integer.parseInt(a.getOrDefault("pool", "100"));

        long t0 = System.nanoTime();
        SplittableRandom rng = new SplittableRandom(seed);
        List<Camera> cams = List.of(
                new Camera("/cam/head/compressed", "head_camera_color_optical_frame", "head", 0),
                new Camera("/cam/wrist_left/compressed", "wrist_left_camera_color_optical_frame", "wrist_left", 11_000_000),
                new Camera("/cam/wrist_right/compressed", "wrist_right_camera_color_optical_frame", "wrist_right", 22_000_000));
        Map<String, List<byte[]>> pools = new LinkedHashMap<>();
        for (Camera c : cams) {
            List<Path> sources = sources(cameraDir, c.pool());
            pools.put(c.pool(), JpegPool.build(sources, poolSize, jpegBytes, rng.split()));
            System.err.printf(Locale.ROOT, "%s: %d frames from %d stills, mean %d bytes%n", c.pool(), poolSize,
                    sources.size(), (long) pools.get(c.pool()).stream().mapToInt(b -> b.length).average().orElse(0));
        }

        List<McapWriter> writers = new ArrayList<>();
        writers.add(writer(out, McapWriter.Compression.ZSTD, level, chunkSize));
        if (outNone != null) {
            writers.add(writer(outNone, McapWriter.Compression.NONE, level, chunkSize));
        }
        try {
            int imgSchema = 0;
            int jsSchema = 0;
            int cmdSchema = 0;
            for (McapWriter w : writers) {
                imgSchema = w.registerSchema(Ros2Schemas.COMPRESSED_IMAGE_NAME, Ros2Schemas.ENCODING, utf8(Ros2Schemas.COMPRESSED_IMAGE));
                jsSchema = w.registerSchema(Ros2Schemas.JOINT_STATE_NAME, Ros2Schemas.ENCODING, utf8(Ros2Schemas.JOINT_STATE));
                cmdSchema = w.registerSchema(Ros2Schemas.FLOAT64_MULTI_ARRAY_NAME, Ros2Schemas.ENCODING,
                        utf8(Ros2Schemas.FLOAT64_MULTI_ARRAY));
            }
            Map<String, String> qos = Map.of("offered_qos_profiles", QOS_YAML);
            List<Stream> streams = new ArrayList<>();
            for (Camera c : cams) {
                int id = 0;
                for (McapWriter w : writers) {
                    id = w.registerChannel(c.topic(), Ros2Schemas.MESSAGE_ENCODING, imgSchema, qos);
                }
                streams.add(new CameraStream(id, c, pools.get(c.pool()), rng.split()));
            }
            int jsId = 0;
            int cmdId = 0;
            for (McapWriter w : writers) {
                jsId = w.registerChannel("/joint_states", Ros2Schemas.MESSAGE_ENCODING, jsSchema, qos);
                cmdId = w.registerChannel("/cmd", Ros2Schemas.MESSAGE_ENCODING, cmdSchema, qos);
            }
            streams.add(new JointStream(jsId, rng.split()));
            streams.add(new CommandStream(cmdId, rng.split()));

            long endNs = START_NS + Math.round(duration * 1e9);
            PriorityQueue<Stream> queue = new PriorityQueue<>((x, y) -> {
                int c = Long.compare(x.logNs, y.logNs);
                return c != 0 ? c : Integer.compare(x.channelId, y.channelId);
            });
            for (Stream s : streams) {
                if (s.fill(endNs)) {
                    queue.add(s);
                }
            }
            long messages = 0;
            long payload = 0;
            Map<String, Long> perTopic = new LinkedHashMap<>();
            while (!queue.isEmpty()) {
                Stream s = queue.poll();
                for (McapWriter w : writers) {
                    w.writeMessage(s.channelId, s.seq, s.logNs, s.logNs, s.cdr.array(), 0, s.cdr.size());
                }
                messages++;
                payload += s.cdr.size();
                perTopic.merge(s.topic, 1L, Long::sum);
                s.seq++;
                if (s.fill(endNs)) {
                    queue.add(s);
                }
            }
            for (McapWriter w : writers) {
                w.close();
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            StringBuilder json = new StringBuilder();
            json.append("{\"file\":").append(Json.str(out.toString()))
                    .append(",\"fileBytes\":").append(Files.size(out));
            if (outNone != null) {
                json.append(",\"fileNone\":").append(Json.str(outNone.toString()))
                        .append(",\"fileNoneBytes\":").append(Files.size(outNone));
            }
            json.append(",\"durationS\":").append(duration).append(",\"seed\":").append(seed)
                    .append(",\"chunkSize\":").append(chunkSize).append(",\"zstdLevel\":").append(level)
                    .append(",\"jpegPoolPerCamera\":").append(poolSize)
                    .append(",\"meanJpegBytes\":").append(Math.round(pools.values().stream()
                            .flatMap(List::stream).mapToInt(b -> b.length).average().orElse(0)))
                    .append(",\"messages\":").append(messages).append(",\"payloadBytes\":").append(payload)
                    .append(",\"perTopic\":{")
                    .append(perTopic.entrySet().stream().map(e -> Json.str(e.getKey()) + ":" + e.getValue())
                            .collect(Collectors.joining(",")))
                    .append("},\"seconds\":").append(String.format(Locale.ROOT, "%.1f", secs)).append('}');
            System.out.println(json);
            Files.writeString(Path.of(out + ".gen.json"), json + "\n");
        } catch (IOException | RuntimeException e) {
            for (McapWriter w : writers) {
                w.abort();
            }
            throw e;
        }
    }

    private static McapWriter writer(Path p, McapWriter.Compression c, int level, long chunkSize) throws IOException {
        return McapWriter.builder().profile("ros2").library("flywheel-bench McapBenchFile").compression(c)
                .zstdLevel(level).chunkSize(chunkSize).syncOnClose(false).build(p);
    }

    /** The stills each camera's pool is made from (the same split as the peer's make_jpeg_pool.sh). */
    static List<Path> sources(Path cameraDir, String pool) throws IOException {
        List<Path> out = new ArrayList<>();
        switch (pool) {
            case "head" -> {
                out.addAll(list(cameraDir.resolve("widowx-tictactoe/over_shoulder_cam"), ".jpg"));
                out.add(cameraDir.resolve("xarm-rgbd/resources/bridge_example.jpeg"));
            }
            case "wrist_left" -> out.addAll(list(cameraDir.resolve("apc2016-rgbd/scene-0000"), ".color.png"));
            case "wrist_right" -> {
                out.addAll(list(cameraDir.resolve("widowx-tictactoe/top_down_cam"), ".jpg"));
                out.addAll(list(cameraDir.resolve("arc2017-rgbd/parallel-jaw-grasping"), ".color.png"));
                out.addAll(list(cameraDir.resolve("arc2017-rgbd/suction-based-grasping"), ".color.png"));
            }
            default -> throw new IllegalArgumentException(pool);
        }
        for (Path p : out) {
            if (!Files.isRegularFile(p)) {
                throw new IOException("camera still " + p + " is missing; pass --camera-dir <shared>/data/camera");
            }
        }
        if (out.isEmpty()) {
            throw new IOException("no camera stills for " + pool + " under " + cameraDir);
        }
        return out;
    }

    private static List<Path> list(Path dir, String suffix) throws IOException {
        if (!Files.isDirectory(dir)) {
            throw new IOException("camera folder " + dir + " is missing; pass --camera-dir <shared>/data/camera");
        }
        try (var s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(suffix)).sorted().toList();
        }
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    // ------------------------------------------------------------------ message streams

    /** A periodic publisher: its next message is serialized in {@link #cdr} with log time {@link #logNs}. */
    private abstract static class Stream {
        final int channelId;
        final String topic;
        final long periodNs;
        final long phaseNs;
        final SplittableRandom rng;
        final CdrWriter cdr = new CdrWriter(64 * 1024);
        long k;
        long seq;
        long logNs;

        Stream(int channelId, String topic, double hz, long phaseNs, SplittableRandom rng) {
            this.channelId = channelId;
            this.topic = topic;
            this.periodNs = Math.round(1e9 / hz);
            this.phaseNs = phaseNs;
            this.rng = rng;
        }

        /** Serializes the next message; @return false when its stamp is past the end */
        boolean fill(long endNs) {
            long stamp = START_NS + phaseNs + k * periodNs;
            if (stamp >= endNs) {
                return false;
            }
            k++;
            cdr.reset();
            logNs = stamp + write(stamp);
            return true;
        }

        /** Writes the message for header stamp {@code stampNs}; @return the recording latency in ns */
        abstract long write(long stampNs);

        double gauss() {
            // Box-Muller from the stream's own generator (deterministic)
            double u = rng.nextDouble();
            double v = rng.nextDouble();
            return Math.sqrt(-2 * Math.log(u + 1e-12)) * Math.cos(2 * Math.PI * v);
        }
    }

    private static final class CameraStream extends Stream {
        private final Camera cam;
        private final List<byte[]> pool;
        private final byte[] frame = new byte[1 << 20];
        private int n;

        CameraStream(int channelId, Camera cam, List<byte[]> pool, SplittableRandom rng) {
            super(channelId, cam.topic(), 30, cam.phaseNs(), rng);
            this.cam = cam;
            this.pool = pool;
            this.n = rng.nextInt(pool.size());
        }

        @Override
        long write(long stampNs) {
            byte[] src = pool.get(n++ % pool.size());
            // SOI, then a COM segment (FF FE, length 18) with 16 random bytes, then the rest of the JPEG
            frame[0] = (byte) 0xFF;
            frame[1] = (byte) 0xD8;
            frame[2] = (byte) 0xFF;
            frame[3] = (byte) 0xFE;
            frame[4] = 0;
            frame[5] = 18;
            for (int i = 0; i < 16; i += 8) {
                long r = rng.nextLong();
                for (int j = 0; j < 8; j++) {
                    frame[6 + i + j] = (byte) (r >>> (8 * j));
                }
            }
            System.arraycopy(src, 2, frame, 22, src.length - 2);
            cdr.header(stampNs, cam.frameId()).string("rgb8; jpeg compressed bgr8").byteSequence(frame, 0, src.length + 20);
            return Math.round((25 + 4 * gauss()) * 1e6); // exposure + encode + transport
        }
    }

    private static final class JointStream extends Stream {
        private static final List<String> NAMES;

        static {
            List<String> names = new ArrayList<>();
            for (String side : new String[] {"left", "right"}) {
                for (int j = 1; j <= 7; j++) {
                    names.add(side + "_arm_joint_" + j);
                }
                names.add(side + "_gripper_finger_joint");
            }
            NAMES = List.copyOf(names);
        }

        private final double[] freq = new double[16];
        private final double[] amp = new double[16];
        private final double[] phase = new double[16];
        private final double[] pos = new double[16];
        private final double[] vel = new double[16];
        private final double[] eff = new double[16];

        JointStream(int channelId, SplittableRandom rng) {
            super(channelId, "/joint_states", 200, 700_000, rng);
            for (int j = 0; j < 16; j++) {
                freq[j] = 0.05 + 0.4 * rng.nextDouble();
                amp[j] = 0.2 + 1.2 * rng.nextDouble();
                phase[j] = 2 * Math.PI * rng.nextDouble();
            }
        }

        @Override
        long write(long stampNs) {
            double t = (stampNs - START_NS) / 1e9;
            for (int j = 0; j < 16; j++) {
                double w = 2 * Math.PI * freq[j];
                pos[j] = amp[j] * Math.sin(w * t + phase[j]) + 1e-4 * gauss();
                vel[j] = amp[j] * w * Math.cos(w * t + phase[j]) + 1e-3 * gauss();
                eff[j] = 2.5 * Math.sin(w * t + phase[j] + 0.3) + 0.05 * gauss();
            }
            cdr.header(stampNs, "").stringSequence(NAMES).float64Sequence(pos).float64Sequence(vel).float64Sequence(eff);
            return Math.round((0.4 + 0.05 * Math.abs(gauss())) * 1e6);
        }
    }

    private static final class CommandStream extends Stream {
        private final double[] vals = new double[14];

        CommandStream(int channelId, SplittableRandom rng) {
            super(channelId, "/cmd", 50, 3_100_000, rng);
        }

        @Override
        long write(long stampNs) {
            double t = (stampNs - START_NS) / 1e9;
            for (int j = 0; j < 14; j++) {
                vals[j] = Math.sin(0.3 * t + j) * 0.8 + 0.01 * gauss();
            }
            // layout: dim[] = [{label "action", size 14, stride 14}], data_offset 0; then data
            cdr.int32(1).string("action").int32(14).int32(14).int32(0).float64Sequence(vals);
            return Math.round((0.3 + 0.05 * Math.abs(gauss())) * 1e6);
        }
    }

    // ------------------------------------------------------------------ JPEG pool

    /** Builds distinct real-encoder JPEG frames from camera stills. */
    static final class JpegPool {
        private JpegPool() {}

        static List<byte[]> build(List<Path> sources, int count, int targetBytes, SplittableRandom rng)
                throws IOException {
            List<BufferedImage> stills = new ArrayList<>();
            for (Path p : sources) {
                BufferedImage img = ImageIO.read(p.toFile());
                if (img == null) {
                    throw new IOException("cannot decode camera still " + p);
                }
                stills.add(img);
            }
            ImageWriter writer = ImageIO.getImageWritersByFormatName("jpeg").next();
            try {
                List<byte[]> out = new ArrayList<>(count);
                float q = 0.8f;
                for (int k = 0; k < count; k++) {
                    BufferedImage still = stills.get(k % stills.size());
                    BufferedImage frame = frame(still, k, rng);
                    Encoded e = fit(writer, frame, targetBytes, q);
                    q = e.quality;
                    out.add(e.bytes);
                }
                return out;
            } finally {
                writer.dispose();
            }
        }

        /** A panned 95% crop of the still, rescaled to 640x480, brightness-scaled, with sensor noise. */
        private static BufferedImage frame(BufferedImage still, int k, SplittableRandom rng) {
            int w = still.getWidth();
            int h = still.getHeight();
            int cw = (int) (w * 0.95);
            int ch = (int) (h * 0.95);
            int x = (int) Math.round((w - cw) / 2.0 * (1 + Math.sin(2 * Math.PI * k / 23.0)));
            int y = (int) Math.round((h - ch) / 2.0 * (1 + Math.cos(2 * Math.PI * k / 17.0)));
            x = Math.max(0, Math.min(w - cw, x));
            y = Math.max(0, Math.min(h - ch, y));
            BufferedImage f = new BufferedImage(640, 480, BufferedImage.TYPE_3BYTE_BGR);
            Graphics2D g = f.createGraphics();
            g.setRenderingHint(RenderingHints.KEY_INTERPOLATION, RenderingHints.VALUE_INTERPOLATION_BILINEAR);
            g.drawImage(still, 0, 0, 640, 480, x, y, x + cw, y + ch, null);
            g.dispose();
            byte[] px = ((DataBufferByte) f.getRaster().getDataBuffer()).getData();
            double gain = 0.85 + 0.3 * rng.nextDouble();
            double sigma = 2.5 + 2.5 * rng.nextDouble();
            long s = rng.nextLong() | 1;
            for (int i = 0; i < px.length; i++) {
                // xorshift64 noise, sum of 4 uniforms ~ gaussian (sd ~ 1)
                s ^= s << 13;
                s ^= s >>> 7;
                s ^= s << 17;
                double n = ((s & 0xFF) + ((s >>> 8) & 0xFF) + ((s >>> 16) & 0xFF) + ((s >>> 24) & 0xFF) - 510) / 147.8;
                int v = (int) Math.round((px[i] & 0xFF) * gain + sigma * n);
                px[i] = (byte) Math.max(0, Math.min(255, v));
            }
            return f;
        }

        private record Encoded(byte[] bytes, float quality) {}

        /** Bisection on the JPEG quality for the size closest to {@code target} (within 4%, or after 7 tries). */
        private static Encoded fit(ImageWriter writer, BufferedImage img, int target, float start) throws IOException {
            float lo = 0.05f;
            float hi = 0.98f;
            float q = start;
            Encoded best = null;
            for (int i = 0; i < 7; i++) {
                byte[] b = encode(writer, img, q);
                if (best == null || Math.abs(b.length - target) < Math.abs(best.bytes.length - target)) {
                    best = new Encoded(b, q);
                }
                if (Math.abs(b.length - target) <= target * 0.04) {
                    break;
                }
                if (b.length > target) {
                    hi = q;
                } else {
                    lo = q;
                }
                q = (lo + hi) / 2;
            }
            return best;
        }

        private static byte[] encode(ImageWriter writer, BufferedImage img, float quality) throws IOException {
            ByteArrayOutputStream bos = new ByteArrayOutputStream(64 * 1024);
            try (MemoryCacheImageOutputStream ios = new MemoryCacheImageOutputStream(bos)) {
                writer.setOutput(ios);
                ImageWriteParam p = writer.getDefaultWriteParam();
                p.setCompressionMode(ImageWriteParam.MODE_EXPLICIT);
                p.setCompressionQuality(quality);
                writer.write(null, new IIOImage(img, null, null), p);
            }
            return bos.toByteArray();
        }
    }

    /** The QoS metadata rosbag2 writes for a reliable, volatile topic (as in the peer's generator). */
    static final String QOS_YAML = """
            - history: 3
              depth: 0
              reliability: 1
              durability: 2
              deadline:
                sec: 9223372036
                nsec: 854775807
              lifespan:
                sec: 9223372036
                nsec: 854775807
              liveliness: 1
              liveliness_lease_duration:
                sec: 9223372036
                nsec: 854775807
              avoid_ros_namespace_conventions: false""";

    /** Tiny helpers shared by the bench mains. */
    static final class Args {
        private Args() {}

        /** Parses {@code --name value} pairs and bare {@code --flag}s (value "true"); others go to "_" joined by NUL. */
        static Map<String, String> parse(String[] args) {
            Map<String, String> m = new LinkedHashMap<>();
            List<String> positional = new ArrayList<>();
            Iterator<String> it = List.of(args).iterator();
            while (it.hasNext()) {
                String s = it.next();
                if (s.startsWith("--")) {
                    String name = s.substring(2);
                    int eq = name.indexOf('=');
                    if (eq >= 0) {
                        m.put(name.substring(0, eq), name.substring(eq + 1));
                    } else if (FLAGS.contains(name)) {
                        m.put(name, "true");
                    } else if (it.hasNext()) {
                        m.put(name, it.next());
                    } else {
                        throw new IllegalArgumentException("option --" + name + " needs a value");
                    }
                } else {
                    positional.add(s);
                }
            }
            if (!positional.isEmpty()) {
                m.put("_", String.join("\0", positional));
            }
            return m;
        }

        private static final java.util.Set<String> FLAGS = java.util.Set.of("no-crc", "help");

        static String required(Map<String, String> a, String name) {
            String v = a.get(name);
            if (v == null) {
                throw new IllegalArgumentException("missing --" + name);
            }
            return v;
        }
    }

    /** Minimal JSON string quoting for the one-line reports. */
    static final class Json {
        private Json() {}

        static String str(String s) {
            StringBuilder sb = new StringBuilder("\"");
            for (char c : s.toCharArray()) {
                switch (c) {
                    case '"' -> sb.append("\\\"");
                    case '\\' -> sb.append("\\\\");
                    case '\n' -> sb.append("\\n");
                    default -> {
                        if (c < 0x20) {
                            sb.append(String.format("\\u%04x", (int) c));
                        } else {
                            sb.append(c);
                        }
                    }
                }
            }
            return sb.append('"').toString();
        }
    }
}
