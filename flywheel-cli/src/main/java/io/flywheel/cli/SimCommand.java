package io.flywheel.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import java.util.concurrent.Callable;

import io.flywheel.sim.FleetSimulator;
import io.flywheel.sim.GroundTruth;
import io.flywheel.sim.JpegEncoder;
import io.flywheel.sim.Preset;
import io.flywheel.sim.ProgressListener;
import io.flywheel.sim.SimOptions;
import io.flywheel.sim.SimSummary;
import io.flywheel.error.BadInputException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code flywheel sim}: writes a simulated robot fleet's recordings with their ground truth; with {@code --live}, the
 * fleet lives its day against a fleet gateway instead ({@link LiveFleet}).
 */
@Command(name = "sim", mixinStandardHelpOptions = true,
        description = {"Write a simulated dual-arm robot fleet as ROS 2 MCAP episodes (one file per episode)"
                + " plus ground_truth.json: true capture times, clock offsets, drops, duplicate groups, failures.",
            "With --live --gateway HOST:PORT, the robots live their day instead, one thread each, at --speed times real"
                + " time: each uploads every episode to the gateway as soon as it is recorded (resumable gRPC) and, with"
                + " --mqtt URL, publishes heartbeats, battery and joint temperatures (QoS 0), alerts (QoS 1) and"
                + " billing audit records (QoS 2) while it records; --faults cuts uploads mid-file, publishes alerts"
                + " twice and cuts MQTT connections. Tokens come from --tokens FILE or are issued in --lake LAKE, which"
                + " the run is then checked against: every episode in raw_files once, every QoS 1 and 2 message in"
                + " telemetry once. The recordings are the same bytes the offline simulator writes for the same"
                + " options."})
final class SimCommand implements Callable<Integer> {
    @Option(names = "--preset", paramLabel = "NAME", description = "tiny, motivating or bench (default: ${DEFAULT-VALUE})")
    String preset = "tiny";

    @Option(names = "--out", paramLabel = "DIR", description = "fleet folder to write (--live: the robots' disk; default"
            + " a temporary folder, removed at the end)")
    Path out;

    @Option(names = "--seed", description = "random seed (default: ${DEFAULT-VALUE})")
    long seed = 42;

    @Option(names = "--episodes", description = "episode count (default: the preset's)")
    Integer episodes;

    @Option(names = "--robots", paramLabel = "N", description = "robot count (default: the preset's)")
    Integer robots;

    @Option(names = "--episodes-per-robot", paramLabel = "K", description = "episodes of each robot, instead of"
            + " --episodes (default with --live and --robots: the preset's, 3 for tiny)")
    Integer episodesPerRobot;

    @Option(names = "--duration", paramLabel = "SECONDS", description = "mean episode length (default: the preset's)")
    Double duration;

    @Option(names = "--resolution", paramLabel = "WxH", description = "camera resolution, e.g. 320x240")
    String resolution;

    @Option(names = "--frame-drop-rate", paramLabel = "P", description = "share of camera frames dropped")
    Double frameDropRate;

    @Option(names = "--message-drop-rate", paramLabel = "P", description = "share of other messages dropped")
    Double messageDropRate;

    @Option(names = "--duplicate-rate", paramLabel = "P", description = "share of teleop near-duplicate episodes")
    Double duplicateRate;

    @Option(names = "--hard-objects", paramLabel = "N",
            description = "episodes with a transparent or reflective object (default: the preset's share, 4%%)")
    Integer hardObjects;

    @Option(names = "--glass-failures", paramLabel = "N",
            description = "failed episodes on glass cups, at most --hard-objects (default: the preset's)")
    Integer glassFailures;

    @Option(names = "--jpeg", paramLabel = "ENCODER", description = "auto, opencv or imageio (default: ${DEFAULT-VALUE})")
    String jpeg = "auto";

    @Option(names = "--threads", description = "worker threads (default: all cores)")
    Integer threads;

    @Option(names = "--force", description = "write into a non-empty --out folder; an earlier fleet there (its"
            + " ground_truth.json and the .mcap files it lists) is deleted first, other files are kept")
    boolean force;

    /** {@code --eval POLICY}: evaluation rollouts instead of a fleet ({@link SimEval}). */
    @picocli.CommandLine.ArgGroup(exclusive = false, heading = "Evaluation rollouts (instead of a fleet):%n")
    SimEval.Options eval;

    @Mixin
    JsonOutput jsonOutput;

    @Mixin
    Live live;

    @Spec
    CommandSpec spec;

    /** The options of {@code sim --live}. */
    static final class Live {
        @Option(names = "--live", description = "run the fleet live against a fleet gateway (see above)")
        boolean enabled;

        @Option(names = "--gateway", paramLabel = "HOST:PORT", description = "--live: the fleet gateway")
        String gateway;

        @Option(names = "--mqtt", paramLabel = "URL", description = "--live: the MQTT broker the gateway reads"
                + " telemetry from, tcp://host:port (MQTT 3.1.1; default: no telemetry)")
        String mqtt;

        @Option(names = "--tokens", paramLabel = "FILE", description = "--live: the robots' gateway tokens, a line"
                + " 'ROBOT TOKEN' each (gateway token add prints a token)")
        Path tokens;

        @Option(names = "--lake", paramLabel = "LAKE", description = "--live: the gateway's lake, on this machine:"
                + " robots without a token in --tokens get one issued there (revoked when the run ends), and the run"
                + " is checked against it at the end")
        String lake;

        @Option(names = "--no-check", description = "--live: do not check the run against --lake")
        boolean noCheck;

        @Option(names = "--speed", paramLabel = "X", description = "--live: robot time runs X times as fast as wall"
                + " time; 0 or max: as fast as the machine generates (default: ${DEFAULT-VALUE})")
        String speed = "1";

        @Option(names = "--faults", paramLabel = "SPEC", description = "--live: none, all (cut=0.3,duplicate=0.2,"
                + "reconnect=0.2), or cut=P,duplicate=P,reconnect=P: the probability of a connection cut per upload,"
                + " of a second publish per alert, of an MQTT cut per episode (default: ${DEFAULT-VALUE})")
        String faults = "none";

        @Option(names = "--chunk-size", paramLabel = "SIZE", converter = ByteSizeArg.class, description = "--live:"
                + " upload chunk size, 1KiB..4MiB (default: 64KiB)")
        Long chunkSize;

        @Option(names = "--no-wait", description = "--live: do not wait for the gateway to ingest the uploads")
        boolean noWait;

        @Option(names = "--stream-events", description = "--live: the robots also publish the fleet stream over --mqtt"
                + " (episode events, per-second gripper opening and force, the success signal, operator interventions in"
                + " 10%% of the episodes) for a gateway started with --kafka; its ground truth goes to stream_truth.json"
                + " beside ground_truth.json")
        boolean streamEvents;

        @Option(names = "--wait-timeout", paramLabel = "SECONDS", description = "--live: how long each robot waits for"
                + " the ingest of its uploads (default: ${DEFAULT-VALUE})")
        int waitTimeout = 600;

        /** @return the first --live option given without --live, or null */
        String givenWithoutLive(picocli.CommandLine.ParseResult pr) {
            for (String o : List.of("--gateway", "--mqtt", "--tokens", "--lake", "--no-check", "--speed", "--faults",
                    "--chunk-size", "--no-wait", "--wait-timeout", "--stream-events")) {
                if (pr.hasMatchedOption(o)) {
                    return o;
                }
            }
            return null;
        }
    }

    /** Option names of the {@link SimOptions} fields whose range errors a user can cause. */
    private static final Map<String, String> OPTION_OF_FIELD = Map.ofEntries(Map.entry("episodes", "--episodes"),
            Map.entry("robots", "--robots"), Map.entry("episodeSeconds", "--duration"),
            Map.entry("resolution", "--resolution"), Map.entry("duplicateRate", "--duplicate-rate"),
            Map.entry("messageDropRate", "--message-drop-rate"), Map.entry("frameDropRate", "--frame-drop-rate"),
            Map.entry("threads", "--threads"), Map.entry("hardObjects", "--hard-objects"),
            Map.entry("glassFailures", "--glass-failures"), Map.entry("chunkSize", "--chunk-size"));

    private JpegEncoder.Kind jpegKind() {
        return switch (jpeg.toLowerCase(Locale.ROOT)) {
            case "auto" -> JpegEncoder.Kind.AUTO;
            case "opencv" -> JpegEncoder.Kind.OPENCV;
            case "imageio" -> JpegEncoder.Kind.IMAGEIO;
            default -> throw Usage.error(spec, "--jpeg '" + jpeg + "': expected auto, opencv or imageio");
        };
    }

    @Override
    public Integer call() throws Exception {
        boolean json = jsonOutput.enabled();
        if (!live.enabled) {
            String o = live.givenWithoutLive(spec.commandLine().getParseResult());
            Usage.require(spec, o == null, o + " needs --live");
            Usage.require(spec, out != null, "Missing required option: '--out=DIR'");
        }
        if (eval != null) {
            Usage.require(spec, !live.enabled, "--eval and --live exclude each other");
            return SimEval.run(spec, eval, out, seed, force, json, jpegKind());
        }
        SimOptions.Builder b = SimOptions.builder(Usage.check(spec, "--preset", () -> Preset.parse(preset))).seed(seed);
        Usage.require(spec, episodes == null || episodesPerRobot == null, "--episodes and --episodes-per-robot exclude"
                + " each other");
        if (episodes != null) {
            b.episodes(episodes);
        }
        if (robots != null) {
            b.robots(robots);
        }
        if (episodesPerRobot != null || live.enabled && robots != null && episodes == null) {
            Preset p = Preset.parse(preset);
            int k = episodesPerRobot != null ? episodesPerRobot : Math.max(1, p.episodes() / p.robots());
            Usage.atLeast(spec, "--episodes-per-robot", k, 1);
            b.episodes(Math.multiplyExact(k, robots != null ? robots : p.robots()));
        }
        if (duration != null) {
            b.episodeSeconds(duration);
        }
        if (resolution != null) {
            String[] wh = resolution.toLowerCase(Locale.ROOT).split("x");
            Usage.require(spec, wh.length == 2 && wh[0].matches("\\d{1,5}") && wh[1].matches("\\d{1,5}"),
                    "--resolution '" + resolution + "': expected WIDTHxHEIGHT, e.g. 320x240");
            b.resolution(Integer.parseInt(wh[0]), Integer.parseInt(wh[1]));
        }
        if (frameDropRate != null) {
            b.frameDropRate(frameDropRate);
        }
        if (messageDropRate != null) {
            b.messageDropRate(messageDropRate);
        }
        if (hardObjects != null) {
            b.hardObjects(hardObjects);
        }
        if (glassFailures != null) {
            b.glassFailures(glassFailures);
        }
        if (duplicateRate != null) {
            b.duplicateRate(duplicateRate);
        }
        if (threads != null) {
            b.threads(threads);
        }
        b.jpegEncoder(jpegKind());
        if (live.enabled) {
            return new LiveRun(spec, live, json).run(b, out, force);
        }
        b.outDir(out);
        SimOptions options;
        try {
            options = b.build();
        } catch (IllegalArgumentException e) {
            throw Usage.error(spec, optionNames(e.getMessage()));
        }
        prepareOut(out, force);
        ProgressListener progress = json ? ProgressListener.NONE : System.console() != null
                ? ProgressListener.printingTo(System.err) : plainLines(System.err, 2_000_000_000L);
        SimSummary s = FleetSimulator.run(options, progress);
        PrintStream o = System.out;
        if (json) {
            Json.print(o, s);
        } else {
            o.printf(Locale.ROOT, "wrote %d episode(s) of %d robot(s) into %s: %,d messages, %,d camera frames,"
                            + " %.1f MB%n", s.episodes(), s.robots(), s.outDir(), s.messages(), s.cameraFrames(),
                    s.bytes() / 1e6);
            o.printf(Locale.ROOT, "%.0f s simulated in %.1f s (%.1fx real time, %.0f frames/s, %d thread(s), %s JPEG)%n",
                    s.simulatedSeconds(), s.wallSeconds(), s.realTimeFactor(), s.framesPerSecond(), s.threads(),
                    s.jpegEncoder());
            o.println("ground truth: " + s.groundTruth());
        }
        return 0;
    }

    /** @return {@code message} with a leading {@link SimOptions} field name replaced by its option name */
    static String optionNames(String message) {
        if (message == null) {
            return "invalid options";
        }
        int sp = message.indexOf(' ');
        String option = sp < 0 ? null : OPTION_OF_FIELD.get(message.substring(0, sp));
        return option == null ? message : option + message.substring(sp);
    }

    /**
     * Checks the output folder: a missing or empty folder is fine; a file is refused; a non-empty folder is refused
     * unless {@code force}, and then an earlier fleet there (ground_truth.json and the episode files it lists) is
     * deleted first, never other files.
     *
     * @throws BadInputException when {@code out} is a file, or a non-empty folder without {@code force}
     * @throws IOException when a file of the earlier fleet cannot be deleted
     */
    static void prepareOut(Path out, boolean force) throws IOException {
        if (Files.exists(out) && !Files.isDirectory(out)) {
            throw new BadInputException("--out " + out + " is a file, not a folder");
        }
        if (!Files.isDirectory(out)) {
            return;
        }
        boolean empty;
        try (Stream<Path> s = Files.list(out)) {
            empty = s.findAny().isEmpty();
        }
        if (empty) {
            return;
        }
        Path gt = out.resolve(FleetSimulator.GROUND_TRUTH);
        boolean fleet = Files.isRegularFile(gt);
        if (!force) {
            throw new BadInputException(fleet
                    ? "--out " + out + " holds an earlier fleet (" + FleetSimulator.GROUND_TRUTH + "); add --force to"
                            + " replace it (its .mcap files and " + FleetSimulator.GROUND_TRUTH + " are deleted, other"
                            + " files kept), or choose another folder"
                    : "--out " + out + " is not empty and holds no fleet of ours; choose an empty or new folder, or"
                            + " add --force to write into it anyway (nothing there is deleted)");
        }
        if (!fleet) {
            return;
        }
        GroundTruth old;
        try {
            old = FleetSimulator.readGroundTruth(gt);
        } catch (IOException e) {
            throw new BadInputException("--out " + out + ": " + gt + " is not a ground truth file of ours ("
                    + e.getMessage().lines().findFirst().orElse("") + "); nothing was deleted: remove the folder's"
                    + " contents yourself or choose another folder");
        }
        Path root = out.toAbsolutePath().normalize();
        Set<Path> folders = new LinkedHashSet<>();
        for (GroundTruth.Episode ep : old.episodes() == null ? List.<GroundTruth.Episode>of() : old.episodes()) {
            Path f = root.resolve(ep.file()).normalize();
            if (f.startsWith(root) && !f.equals(root) && f.getFileName().toString().endsWith(".mcap")) {
                Files.deleteIfExists(f);
                if (!f.getParent().equals(root)) {
                    folders.add(f.getParent());
                }
            }
        }
        Files.delete(gt);
        for (Path d : folders) {
            try (Stream<Path> s = Files.list(d)) {
                if (s.findAny().isEmpty()) {
                    Files.delete(d);
                }
            } catch (NoSuchFileException e) {
                // already gone
            }
        }
    }

    /**
     * @return a listener that prints one plain line (no carriage return) at most every {@code intervalNanos}, and
     *     always on the last episode: for logs and pipes, where a redrawn line would pile up
     */
    static ProgressListener plainLines(PrintStream err, long intervalNanos) {
        long[] last = {System.nanoTime()};
        return (done, total, messages, bytes, elapsed) -> {
            long now = System.nanoTime();
            if (done < total && now - last[0] < intervalNanos) {
                return;
            }
            last[0] = now;
            double secs = Math.max(1e-9, elapsed / 1e9);
            double rate = done / secs;
            err.printf(Locale.ROOT, "sim: %d/%d episodes (%.0f%%), %.1f episodes/s, %.1f MB/s, ETA %.0fs%n", done, total,
                    100.0 * done / total, rate, bytes / secs / 1e6, rate > 0 ? (total - done) / rate : 0);
            err.flush();
        };
    }
}
