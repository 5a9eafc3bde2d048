package io.flywheel.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;

import io.flywheel.fleet.auth.RobotTokens;
import io.flywheel.fleet.client.FleetClient;
import io.flywheel.fleet.client.FrameFilter;
import io.flywheel.fleet.client.LiveEpisode;
import io.flywheel.fleet.client.LiveStats;
import io.flywheel.fleet.client.UploadListener;
import io.flywheel.fleet.gateway.FleetGateway;
import io.flywheel.fleet.gateway.GatewayOptions;
import io.flywheel.fleet.live.McapReplay;
import io.flywheel.fleet.v1.FileKind;
import io.flywheel.image.GreyFrame;
import io.flywheel.ingest.FrameSkips;
import io.flywheel.image.PerceptualHash;
import io.flywheel.lake.Lake;
import io.flywheel.mcap.McapStreamReader;
import io.flywheel.mcap.Record;
import io.flywheel.ros.cdr.CdrFastPaths;
import io.flywheel.sim.FleetSimulator;
import io.flywheel.sim.GroundTruth;
import io.flywheel.sim.Preset;
import io.flywheel.sim.ProgressListener;
import io.flywheel.sim.SimOptions;

/**
 * Simulated episodes streamed live through a gateway on loopback, with the robot-side frame filter at several
 * thresholds and without it, against the file upload of the same recordings in the same run.
 *
 * <p>A fleet is simulated once (flywheel-sim, seed 42: EPISODES episodes of SECONDS s on ROBOTS robots, three 30 Hz
 * JPEG cameras at WIDTHxHEIGHT, 200 Hz joints, 50 Hz commands). Then, for each threshold, a fresh lake and gateway
 * take every episode as a live stream ({@link McapReplay}: every message in file order, camera frames through the
 * filter; the robots stream at once, one thread and gRPC channel each, as fast as the gateway acknowledges), and
 * the run is timed from the first OPEN to the last episode landed (the gateway's ingest worker starts on the first
 * landed episode and shares the cores). The peer: the same files uploaded with {@link FleetClient#upload} by the same
 * robots at once to a fresh gateway. Also measured on one thread: the robot's cost per frame of the filter (JPEG
 * decode by javax.imageio, reduction, DCT), and the share of episode time the simulator holds the robots still. Per
 * run, from the landed files' frame-skip channels: the share of each camera's frames skipped, how many of the skips
 * had a pHash equal to the frame repeated, and how many fell in the simulator's still stretches.
 *
 * <p>Arguments: folder (must not exist), episodes, seconds, robots, width, height, thresholds (comma-separated, "off"
 * for no filter). Episodes may be a folder of recorded MCAP files instead, streamed as they are (seconds, width and
 * height are then ignored; there is no ground truth of still stretches). Prints one JSON line per run (after a warm-up of one episode streamed and uploaded: lines with
 * {@code "run": "warm-up"}).
 */
public final class LiveStreamBench {
    private LiveStreamBench() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int robots = Integer.parseInt(args[3]);
        String[] thresholds = args[6].split(",");
        List<Path> files;
        List<List<GroundTruth.Interval>> still = new ArrayList<>();
        long simNs = 0;
        long staticNs = 0;
        String resolution = args[4] + "x" + args[5];
        if (args[1].matches("\\d+")) {
            Path simDir = dir.resolve("sim");
            FleetSimulator.run(SimOptions.builder(Preset.BENCH).episodes(Integer.parseInt(args[1])).robots(robots)
                    .episodeSeconds(Double.parseDouble(args[2])).resolution(Integer.parseInt(args[4]),
                            Integer.parseInt(args[5])).seed(42).outDir(simDir).build(), ProgressListener.NONE);
            GroundTruth truth = FleetSimulator.readGroundTruth(simDir.resolve(FleetSimulator.GROUND_TRUTH));
            files = mcaps(simDir);
            for (Path f : files) {
                String rel = simDir.relativize(f).toString().replace('\\', '/');
                GroundTruth.Episode e = truth.episodes().stream().filter(x -> x.file().equals(rel)).findFirst()
                        .orElseThrow();
                still.add(e.staticIntervals());
                simNs += e.durationNs();
                for (GroundTruth.Interval i : e.staticIntervals()) {
                    staticNs += i.endNs() - i.startNs();
                }
            }
        } else { // recorded files, streamed as they are: no ground truth
            files = mcaps(Path.of(args[1]));
            for (Path f : files) {
                still.add(List.of());
                List<Object[]> fr = frames(f);
                simNs += fr.stream().mapToLong(x -> (Long) x[1]).max().orElse(0)
                        - fr.stream().mapToLong(x -> (Long) x[1]).min().orElse(0);
            }
            resolution = "recorded";
        }
        long fileBytes = 0;
        for (Path f : files) {
            fileBytes += Files.size(f);
        }
        double hashMs = hashCost(files.get(0));
        System.out.printf(Locale.ROOT, "{\"run\":\"fleet\",\"episodes\":%d,\"episode_s\":%.1f,\"robots\":%d,"
                + "\"resolution\":\"%s\",\"file_bytes\":%d,\"static_share\":%.4f,\"hash_ms_per_frame\":%.3f}%n",
                files.size(), simNs / 1e9, robots, resolution, fileBytes, (double) staticNs / simNs, hashMs);
        // warm-up, not measured: one episode streamed (with and without the filter) and uploaded, so that neither
        // the first live run nor the peer pays for the JIT
        List<List<GroundTruth.Interval>> none = List.of(List.of());
        stream(dir.resolve("warm-live"), files.subList(0, 1), none, 1, 4, 0);
        stream(dir.resolve("warm-live-off"), files.subList(0, 1), none, 1, -1, 0);
        upload(dir.resolve("warm-upload"), files.subList(0, 1), 1);
        double uploadS = upload(dir.resolve("upload"), files, robots);
        System.out.printf(Locale.ROOT, "{\"run\":\"upload\",\"seconds\":%.2f,\"mb_s\":%.2f}%n", uploadS,
                fileBytes / 1e6 / uploadS);
        for (String t : thresholds) {
            stream(dir.resolve("live-" + t), files, still, robots, t.equals("off") ? -1 : Integer.parseInt(t), simNs);
        }
    }

    static List<Path> mcaps(Path folder) throws java.io.IOException {
        try (Stream<Path> s = Files.walk(folder)) {
            return s.filter(p -> p.toString().endsWith(".mcap")).sorted().toList();
        }
    }

    /** @return whether {@code t} lies in one of the intervals */
    static boolean in(List<GroundTruth.Interval> intervals, long t) {
        for (GroundTruth.Interval i : intervals) {
            if (t >= i.startNs() && t < i.endNs()) {
                return true;
            }
        }
        return false;
    }

    /** @return the camera frames of a file: topic and log time of each */
    static List<Object[]> frames(Path mcap) throws Exception {
        List<Object[]> out = new ArrayList<>();
        java.util.Map<Integer, String> schemaOf = new java.util.HashMap<>();
        java.util.Map<Integer, String[]> channel = new java.util.HashMap<>();
        try (McapStreamReader r = McapStreamReader.open(mcap)) {
            for (Record rec; (rec = r.next()) != null; ) {
                if (rec instanceof Record.Schema s) {
                    schemaOf.put(s.id(), s.name());
                } else if (rec instanceof Record.Channel c) {
                    channel.put(c.id(), new String[] {c.topic(), schemaOf.get(c.schemaId())});
                } else if (rec instanceof Record.Message m
                        && "sensor_msgs/msg/CompressedImage".equals(channel.get(m.channelId())[1])) {
                    out.add(new Object[] {channel.get(m.channelId())[0], m.logTime()});
                }
            }
        }
        return out;
    }

    /** @return the robot's milliseconds per frame to decode and hash the first episode's frames, one thread */
    static double hashCost(Path mcap) throws Exception {
        List<byte[]> jpegs = new ArrayList<>();
        try (McapStreamReader r = McapStreamReader.open(mcap)) {
            java.util.Map<Integer, String> schemaOf = new java.util.HashMap<>();
            java.util.Map<Integer, String> type = new java.util.HashMap<>();
            for (Record rec; (rec = r.next()) != null; ) {
                if (rec instanceof Record.Schema s) {
                    schemaOf.put(s.id(), s.name());
                } else if (rec instanceof Record.Channel c) {
                    type.put(c.id(), schemaOf.get(c.schemaId()));
                } else if (rec instanceof Record.Message m
                        && "sensor_msgs/msg/CompressedImage".equals(type.get(m.channelId()))) {
                    java.nio.ByteBuffer img = CdrFastPaths.compressedImage(m.data().duplicate()).data();
                    byte[] b = new byte[img.remaining()];
                    img.get(b);
                    jpegs.add(b);
                }
            }
        }
        long sink = 0;
        for (int i = 0; i < Math.min(200, jpegs.size()); i++) { // warm-up
            sink += PerceptualHash.of(GreyFrame.decode(jpegs.get(i)));
        }
        long t0 = System.nanoTime();
        for (byte[] j : jpegs) {
            sink += PerceptualHash.of(GreyFrame.decode(j));
        }
        double ms = (System.nanoTime() - t0) / 1e6 / jpegs.size();
        if (sink == 42) {
            System.err.println("(unlikely)");
        }
        return ms;
    }

    /** The peer: every file uploaded by its robot, the robots at once. @return seconds */
    static double upload(Path dir, List<Path> files, int robots) throws Exception {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            List<String> tokens = tokens(lake, robots); // before the gateway reads them
            try (FleetGateway gw = FleetGateway.start(lake, GatewayOptions.builder().build())) {
                return upload(gw, tokens, files, robots);
            }
        }
    }

    private static double upload(FleetGateway gw, List<String> tokens, List<Path> files, int robots)
            throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(robots);
        try {
            long t0 = System.nanoTime();
            List<Future<?>> done = new ArrayList<>();
            for (int r = 0; r < robots; r++) {
                int robot = r;
                done.add(pool.submit(() -> {
                    try (FleetClient c = FleetClient.builder(gw.target()).token(tokens.get(robot)).build()) {
                        for (int i = robot; i < files.size(); i += robots) {
                            c.upload(files.get(i), "robot-" + robot, "ep-" + i, FileKind.MCAP, UploadListener.NONE);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
            return (System.nanoTime() - t0) / 1e9;
        } finally {
            pool.shutdownNow();
        }
    }

    static List<String> tokens(Lake lake, int robots) {
        List<String> tokens = new ArrayList<>();
        for (int r = 0; r < robots; r++) {
            tokens.add(RobotTokens.add(lake, "robot-" + r).token());
        }
        return tokens;
    }

    /** Every episode as a live stream with threshold {@code t} (-1: no filter); prints the run's line. */
    static void stream(Path dir, List<Path> files, List<List<GroundTruth.Interval>> still, int robots, int t,
            long simNs) throws Exception {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            List<String> tokens = tokens(lake, robots); // before the gateway reads them
            try (FleetGateway gw = FleetGateway.start(lake, GatewayOptions.builder().build())) {
                stream(gw, dir.resolve("lake"), tokens, files, still, robots, t, simNs);
            }
        }
    }

    private static void stream(FleetGateway gw, Path lakeDir, List<String> tokens, List<Path> files,
            List<List<GroundTruth.Interval>> still, int robots, int t, long simNs) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(robots);
        try {
            com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean)
                    java.lang.management.ManagementFactory.getOperatingSystemMXBean();
            long cpu0 = os.getProcessCpuTime();
            long t0 = System.nanoTime();
            List<Future<java.util.Map<Integer, LiveEpisode.Result>>> done = new ArrayList<>();
            for (int r = 0; r < robots; r++) {
                int robot = r;
                done.add(pool.submit(() -> {
                    java.util.Map<Integer, LiveEpisode.Result> out = new java.util.HashMap<>();
                    try (FleetClient c = FleetClient.builder(gw.target()).token(tokens.get(robot)).build()) {
                        for (int i = robot; i < files.size(); i += robots) {
                            out.put(i, McapReplay.stream(c, files.get(i), "robot-" + robot, "ep-" + i,
                                    t < 0 ? null : FrameFilter.builder(t).build(), m -> true));
                        }
                    }
                    return out;
                }));
            }
            long offered = 0;
            long sent = 0;
            long wire = 0;
            long framesOffered = 0;
            long skipped = 0;
            long messages = 0;
            java.util.Map<Integer, LiveEpisode.Result> results = new java.util.TreeMap<>();
            for (Future<java.util.Map<Integer, LiveEpisode.Result>> f : done) {
                results.putAll(f.get());
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            double cpu = (os.getProcessCpuTime() - cpu0) / 1e9;
            // where the skips are: per topic, and inside the simulator's still stretches or not
            java.util.Map<String, long[]> byTopic = new java.util.TreeMap<>(); // offered, skipped
            long stillFrames = 0;
            long stillSkipped = 0;
            long exact = 0;
            for (java.util.Map.Entry<Integer, LiveEpisode.Result> e : results.entrySet()) {
                List<GroundTruth.Interval> iv = still.get(e.getKey());
                for (Object[] fr : frames(files.get(e.getKey()))) {
                    byTopic.computeIfAbsent((String) fr[0], k -> new long[2])[0]++;
                    stillFrames += in(iv, (Long) fr[1]) ? 1 : 0;
                }
                Path landed = lakeDir.resolve(e.getValue().done().getUpload().getLandedPath());
                try (McapStreamReader r = McapStreamReader.open(landed)) {
                    java.util.Set<Integer> skipChannels = new java.util.HashSet<>();
                    for (Record rec; (rec = r.next()) != null; ) {
                        if (rec instanceof Record.Channel c && c.topic().equals(FrameSkips.TOPIC)) {
                            skipChannels.add(c.id());
                        } else if (rec instanceof Record.Message m && skipChannels.contains(m.channelId())) {
                            FrameSkips.Skip k = FrameSkips.decode(m.data(), landed.toString(), 0);
                            byTopic.computeIfAbsent(k.topic(), x -> new long[2])[1]++;
                            stillSkipped += in(iv, k.logTimeNs()) ? 1 : 0;
                            exact += k.hammingDistance() == 0 ? 1 : 0;
                        }
                    }
                }
            }
            StringBuilder topics = new StringBuilder();
            byTopic.forEach((k, v) -> topics.append(topics.length() == 0 ? "" : ",").append('"').append(k)
                    .append("\":").append(String.format(Locale.ROOT, "%.4f", v[1] / (double) v[0])));
            for (LiveEpisode.Result r : results.values()) {
                LiveStats s = r.stats();
                offered += s.bytesOffered();
                sent += s.bytesSent();
                wire += s.wireBytes();
                skipped += s.framesSkipped();
                messages += s.messagesOffered();
                framesOffered += s.framesOffered();
            }
            System.out.printf(Locale.ROOT, "{\"run\":\"%s\",\"threshold\":%d,\"bytes_offered\":%d,"
                    + "\"bytes_sent\":%d,\"wire_bytes\":%d,\"uplink_saved\":%.4f,\"frames\":%d,\"frames_skipped\":%d,"
                    + "\"skipped_exact\":%d,\"skipped_by_topic\":{%s},\"still_frames\":%d,\"still_skipped\":%d,"
                    + "\"messages\":%d,\"seconds\":%.2f,\"mb_s_offered\":%.2f,\"msgs_s\":%.0f,\"x_real_time\":%.1f,"
                    + "\"cpu_s\":%.1f}%n", simNs == 0 ? "warm-up" : "live", t, offered, sent, wire,
                    1 - (double) sent / offered, framesOffered, skipped, exact,
                    topics, stillFrames, stillSkipped, messages, secs, offered / 1e6 / secs, messages / secs,
                    simNs / 1e9 / secs, cpu);
        } finally {
            pool.shutdownNow();
        }
    }
}
