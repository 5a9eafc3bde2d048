package io.flywheel.sim;

import java.nio.file.Path;
import java.util.Objects;

/**
 * Options of one fleet simulation; build with {@link #builder(Preset)}.
 *
 * @param preset the preset the defaults came from
 * @param seed fleet seed; the same options and seed give byte-identical output
 * @param episodes number of episodes (files), at least 1
 * @param robots number of robots, 1..episodes
 * @param episodeSeconds mean episode duration in seconds (actual durations spread about +-25%), at least 1
 * @param width camera image width in pixels (all three cameras), 32..4096
 * @param height camera image height in pixels, 24..4096
 * @param hardObjects episodes with a transparent or reflective object; -1: the preset's share (4%)
 * @param glassFailures failed episodes on glass cups (gripper closes on nothing); -1: the preset's
 * @param opaqueFailureRate probability that an episode with an ordinary object fails (object slips)
 * @param duplicateRate share of episodes that repeat the previous demonstration of the same operator (0..0.5)
 * @param messageDropRate probability that a joint-state or command message is lost (0..0.5)
 * @param frameDropRate probability that a camera frame is lost (0..0.5)
 * @param jpegQuality JPEG quality 1..100
 * @param jpegEncoder which encoder writes the frames
 * @param outDir output folder: {@code <outDir>/<robot_id>/<episode_id>.mcap} and {@code ground_truth.json}
 * @param threads worker threads, at least 1
 * @param chunkSize MCAP chunk size target in bytes
 */
public record SimOptions(Preset preset, long seed, int episodes, int robots, double episodeSeconds,
                         int width, int height, int hardObjects, int glassFailures,
                         double opaqueFailureRate, double duplicateRate, double messageDropRate,
                         double frameDropRate, int jpegQuality, JpegEncoder.Kind jpegEncoder,
                         Path outDir, int threads, long chunkSize) {

    public SimOptions {
        Objects.requireNonNull(preset, "preset");
        Objects.requireNonNull(outDir, "outDir");
        Objects.requireNonNull(jpegEncoder, "jpegEncoder");
        check(episodes >= 1, "episodes must be >= 1, got " + episodes);
        check(robots >= 1 && robots <= episodes, "robots must be in 1.." + episodes + ", got " + robots);
        check(episodeSeconds >= 1 && episodeSeconds <= 3600, "episodeSeconds must be in 1..3600, got " + episodeSeconds);
        check(width >= 32 && width <= 4096 && height >= 24 && height <= 4096,
                "resolution must be within 32x24..4096x4096, got " + width + "x" + height);
        check(hardObjects >= 0 && hardObjects <= episodes, "hardObjects must be in 0.." + episodes + ", got " + hardObjects);
        check(glassFailures >= 0 && glassFailures <= hardObjects,
                "glassFailures must be in 0..hardObjects (" + hardObjects + "), got " + glassFailures);
        check(opaqueFailureRate >= 0 && opaqueFailureRate <= 0.5, "opaqueFailureRate must be in 0..0.5");
        check(duplicateRate >= 0 && duplicateRate <= 0.5, "duplicateRate must be in 0..0.5");
        check(messageDropRate >= 0 && messageDropRate <= 0.5, "messageDropRate must be in 0..0.5");
        check(frameDropRate >= 0 && frameDropRate <= 0.5, "frameDropRate must be in 0..0.5");
        check(jpegQuality >= 1 && jpegQuality <= 100, "jpegQuality must be in 1..100");
        check(threads >= 1, "threads must be >= 1");
        check(chunkSize >= 1024, "chunkSize must be >= 1024 bytes");
    }

    private static void check(boolean ok, String msg) {
        if (!ok) {
            throw new IllegalArgumentException(msg);
        }
    }

    /** @return a builder with the preset's defaults and seed 42 */
    public static Builder builder(Preset preset) {
        return new Builder(preset);
    }

    /** @return a builder holding these options */
    public Builder toBuilder() {
        Builder b = new Builder(preset);
        b.seed = seed;
        b.episodes = episodes;
        b.robots = robots;
        b.episodeSeconds = episodeSeconds;
        b.width = width;
        b.height = height;
        b.hardObjects = hardObjects;
        b.glassFailures = glassFailures;
        b.opaqueFailureRate = opaqueFailureRate;
        b.duplicateRate = duplicateRate;
        b.messageDropRate = messageDropRate;
        b.frameDropRate = frameDropRate;
        b.jpegQuality = jpegQuality;
        b.jpegEncoder = jpegEncoder;
        b.outDir = outDir;
        b.threads = threads;
        b.chunkSize = chunkSize;
        return b;
    }

    /** Builder; unset values come from the preset. */
    public static final class Builder {
        private final Preset preset;
        private long seed = 42;
        private Integer episodes;
        private Integer robots;
        private Double episodeSeconds;
        private Integer width;
        private Integer height;
        private int hardObjects = -1;
        private int glassFailures = -1;
        private Double opaqueFailureRate;
        private double duplicateRate = 0.06;
        private double messageDropRate = 0.002;
        private double frameDropRate = 0.004;
        private int jpegQuality = 85;
        private JpegEncoder.Kind jpegEncoder = JpegEncoder.Kind.AUTO;
        private Path outDir = Path.of("sim-out");
        private int threads = Runtime.getRuntime().availableProcessors();
        private long chunkSize = 4L << 20;

        private Builder(Preset preset) {
            this.preset = Objects.requireNonNull(preset, "preset");
        }

        public Builder seed(long v) { seed = v; return this; }
        public Builder episodes(int v) { episodes = v; return this; }
        public Builder robots(int v) { robots = v; return this; }
        /** @param v mean episode duration in seconds */
        public Builder episodeSeconds(double v) { episodeSeconds = v; return this; }
        public Builder resolution(int w, int h) { width = w; height = h; return this; }
        /** @param v episodes with transparent/reflective objects; -1 for the preset's share */
        public Builder hardObjects(int v) { hardObjects = v; return this; }
        /** @param v failures on glass cups; -1 for the preset's */
        public Builder glassFailures(int v) { glassFailures = v; return this; }
        public Builder opaqueFailureRate(double v) { opaqueFailureRate = v; return this; }
        public Builder duplicateRate(double v) { duplicateRate = v; return this; }
        public Builder messageDropRate(double v) { messageDropRate = v; return this; }
        public Builder frameDropRate(double v) { frameDropRate = v; return this; }
        public Builder jpegQuality(int v) { jpegQuality = v; return this; }
        public Builder jpegEncoder(JpegEncoder.Kind v) { jpegEncoder = v; return this; }
        public Builder outDir(Path v) { outDir = v; return this; }
        public Builder threads(int v) { threads = v; return this; }
        public Builder chunkSize(long v) { chunkSize = v; return this; }

        /**
         * @return the options
         * @throws IllegalArgumentException when a value is out of its range
         */
        public SimOptions build() {
            int eps = episodes != null ? episodes : preset.episodes;
            int rob = robots != null ? robots : Math.min(preset.robots, eps);
            int hard = hardObjects >= 0 ? hardObjects
                    : eps == preset.episodes ? preset.hardObjects : (int) Math.round(eps * 0.04);
            int glass = glassFailures >= 0 ? glassFailures : Math.min(hard, eps == preset.episodes
                    ? preset.glassFailures : (int) Math.round(hard * preset.glassFailures / (double) Math.max(1, preset.hardObjects)));
            return new SimOptions(preset, seed, eps, rob,
                    episodeSeconds != null ? episodeSeconds : preset.episodeSeconds,
                    width != null ? width : preset.width, height != null ? height : preset.height,
                    hard, glass, opaqueFailureRate != null ? opaqueFailureRate : preset.opaqueFailureRate,
                    duplicateRate, messageDropRate, frameDropRate, jpegQuality, jpegEncoder, outDir,
                    threads, chunkSize);
        }
    }
}
