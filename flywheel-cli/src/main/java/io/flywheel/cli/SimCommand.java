package io.flywheel.cli;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;

import io.flywheel.sim.FleetSimulator;
import io.flywheel.sim.JpegEncoder;
import io.flywheel.sim.Preset;
import io.flywheel.sim.ProgressListener;
import io.flywheel.sim.SimOptions;
import io.flywheel.sim.SimSummary;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code flywheel sim}: writes a simulated robot fleet's recordings with their ground truth. */
@Command(name = "sim", mixinStandardHelpOptions = true,
        description = "Write a simulated dual-arm robot fleet as ROS 2 MCAP episodes (one file per episode)"
                + " plus ground_truth.json: true capture times, clock offsets, drops, duplicate groups, failures.")
final class SimCommand implements Callable<Integer> {
    @Option(names = "--preset", paramLabel = "NAME", description = "tiny, motivating or bench (default: ${DEFAULT-VALUE})")
    String preset = "tiny";

    @Option(names = "--out", paramLabel = "DIR", required = true, description = "fleet folder to write")
    Path out;

    @Option(names = "--seed", description = "random seed (default: ${DEFAULT-VALUE})")
    long seed = 42;

    @Option(names = "--episodes", description = "episode count (default: the preset's)")
    Integer episodes;

    @Option(names = "--robots", description = "robot count (default: the preset's)")
    Integer robots;

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

    @Option(names = "--jpeg", paramLabel = "ENCODER", description = "auto, opencv or imageio (default: ${DEFAULT-VALUE})")
    String jpeg = "auto";

    @Option(names = "--threads", description = "worker threads (default: all cores)")
    Integer threads;

    @Option(names = "--json", description = "machine-readable summary")
    boolean json;

    @Override
    public Integer call() throws Exception {
        SimOptions.Builder b = SimOptions.builder(Preset.parse(preset)).seed(seed).outDir(out);
        if (episodes != null) {
            b.episodes(episodes);
        }
        if (robots != null) {
            b.robots(robots);
        }
        if (duration != null) {
            b.episodeSeconds(duration);
        }
        if (resolution != null) {
            String[] wh = resolution.toLowerCase(Locale.ROOT).split("x");
            if (wh.length != 2 || !wh[0].matches("\\d+") || !wh[1].matches("\\d+")) {
                throw new IllegalArgumentException("--resolution '" + resolution + "': expected WIDTHxHEIGHT, e.g. 320x240");
            }
            b.resolution(Integer.parseInt(wh[0]), Integer.parseInt(wh[1]));
        }
        if (frameDropRate != null) {
            b.frameDropRate(frameDropRate);
        }
        if (messageDropRate != null) {
            b.messageDropRate(messageDropRate);
        }
        if (duplicateRate != null) {
            b.duplicateRate(duplicateRate);
        }
        if (threads != null) {
            b.threads(threads);
        }
        b.jpegEncoder(switch (jpeg.toLowerCase(Locale.ROOT)) {
            case "auto" -> JpegEncoder.Kind.AUTO;
            case "opencv" -> JpegEncoder.Kind.OPENCV;
            case "imageio" -> JpegEncoder.Kind.IMAGEIO;
            default -> throw new IllegalArgumentException("--jpeg '" + jpeg + "': expected auto, opencv or imageio");
        });
        SimSummary s = FleetSimulator.run(b.build(), json ? ProgressListener.NONE : ProgressListener.printingTo(System.err));
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
}
