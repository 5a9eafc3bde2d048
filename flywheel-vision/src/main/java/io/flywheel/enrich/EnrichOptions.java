package io.flywheel.enrich;

import io.flywheel.enrich.image.FrameAnalyzer;
import io.flywheel.enrich.motion.MotionLabeler;

/**
 * Settings of one {@link EnrichJob} run. Build with {@link #builder()}; {@link #defaults()} works.
 *
 * @param threads worker threads for read + decode + metrics (default: available processors)
 * @param batchEpisodes most episodes per commit (default 16)
 * @param batchFrames most frames per commit, unless one episode alone has more (default 4,096); with the batch
 *     size this bounds memory: the hot copies and thumbnails of one batch are held until its commit
 * @param blurThreshold the absolute floor: sharpness (variance of the Laplacian, grey levels squared) below which an
 *     image is blurry whatever its camera's other frames are (default 12: sharp real 640x480 frames of the bundled
 *     data measure 130-820, the same blurred with a Gaussian of sigma 3 measure 1.4-3.7), so that a camera blurred
 *     from its first frame to its last is flagged
 * @param blurRatio the relative rule: an image is also blurry when its sharpness is below this share of the median
 *     sharpness of its camera's frames in the episode (default 0.35; 0 turns the rule off), since sharpness depends
 *     on the scene's texture and the camera's resolution more than on focus
 * @param staticThreshold mean absolute difference (grey levels, 64-px thumbnails) to the previous frame of the same
 *     camera below which an image is static (default 1.0)
 * @param stride which frames get embeddings (default every 5th plus phase changes)
 * @param embedBatch images per embedder call (default 16)
 * @param image decode / hot copy options (default 320 px longest side, JPEG quality 90)
 * @param motion gripper state and phase thresholds
 * @param stopAfterBatches stop after this many committed batches (0 = run to the end); for tests of resume and for
 *     bounded runs
 */
public record EnrichOptions(int threads, int batchEpisodes, int batchFrames, double blurThreshold, double blurRatio,
                            double staticThreshold, Stride stride, int embedBatch, FrameAnalyzer.Options image,
                            MotionLabeler.Options motion, int stopAfterBatches) {
    public EnrichOptions {
        if (threads < 1 || batchEpisodes < 1 || batchFrames < 1 || embedBatch < 1 || stopAfterBatches < 0
                || !(blurThreshold >= 0) || !(blurRatio >= 0 && blurRatio < 1) || !(staticThreshold >= 0)) {
            throw new IllegalArgumentException("enrich options: threads, batch sizes and embed batch must be >= 1,"
                    + " thresholds >= 0 and stop-after >= 0; got threads=" + threads + " batchEpisodes=" + batchEpisodes
                    + " batchFrames=" + batchFrames + " embedBatch=" + embedBatch + " blur=" + blurThreshold + " blurRatio=" + blurRatio + " (in [0, 1))"
                    + " static=" + staticThreshold + " stopAfter=" + stopAfterBatches);
        }
        java.util.Objects.requireNonNull(stride, "stride");
        java.util.Objects.requireNonNull(image, "image");
        java.util.Objects.requireNonNull(motion, "motion");
    }

    /** @return the defaults above */
    public static EnrichOptions defaults() {
        return builder().build();
    }

    /** @return a builder with the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** Builder for {@link EnrichOptions}. */
    public static final class Builder {
        private int threads = Runtime.getRuntime().availableProcessors();
        private int batchEpisodes = 16;
        private int batchFrames = 4096;
        private double blurThreshold = 12;
        private double blurRatio = 0.35;
        private double staticThreshold = 1.0;
        private Stride stride = Stride.every(5);
        private int embedBatch = 16;
        private FrameAnalyzer.Options image = FrameAnalyzer.Options.defaults();
        private MotionLabeler.Options motion = MotionLabeler.Options.defaults();
        private int stopAfterBatches;

        private Builder() {}

        public Builder threads(int n) {
            threads = n;
            return this;
        }

        public Builder batchEpisodes(int n) {
            batchEpisodes = n;
            return this;
        }

        public Builder batchFrames(int n) {
            batchFrames = n;
            return this;
        }

        public Builder blurThreshold(double t) {
            blurThreshold = t;
            return this;
        }

        public Builder staticThreshold(double t) {
            staticThreshold = t;
            return this;
        }

        public Builder stride(Stride s) {
            stride = s;
            return this;
        }

        public Builder embedBatch(int n) {
            embedBatch = n;
            return this;
        }

        public Builder blurRatio(double r) {
            blurRatio = r;
            return this;
        }

        public Builder image(FrameAnalyzer.Options o) {
            image = o;
            return this;
        }

        public Builder motion(MotionLabeler.Options o) {
            motion = o;
            return this;
        }

        public Builder stopAfterBatches(int n) {
            stopAfterBatches = n;
            return this;
        }

        public EnrichOptions build() {
            return new EnrichOptions(threads, batchEpisodes, batchFrames, blurThreshold, blurRatio, staticThreshold, stride,
                    embedBatch, image, motion, stopAfterBatches);
        }
    }
}
