package io.flywheel.enrich.video;

/**
 * Options for {@link AnnexBDecoder} and {@link Mp4VideoReader}.
 *
 * @param strict  true (default): any bitstream error the decoder detects, even one it could
 *                conceal, fails with a {@link VideoFormatException} naming the position
 *                (FFmpeg {@code err_recognition = explode}); false: the decoder conceals errors
 *                and only undecodable input fails
 * @param threads decoder threads, &ge; 1 (default 1: callers parallelise across cameras and
 *                files, and one thread keeps one output frame per input message)
 */
public record DecoderOptions(boolean strict, int threads) {
    /** @throws IllegalArgumentException when threads &lt; 1 */
    public DecoderOptions {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1, got " + threads);
        }
    }

    /** @return strict, one thread */
    public static DecoderOptions defaults() {
        return new DecoderOptions(true, 1);
    }

    /** @return a builder starting from {@link #defaults()} */
    public static Builder builder() {
        return new Builder();
    }

    /** Builder for {@link DecoderOptions}. */
    public static final class Builder {
        private boolean strict = true;
        private int threads = 1;

        private Builder() {}

        /** @param on fail on any detected bitstream error (default true) */
        public Builder strict(boolean on) { this.strict = on; return this; }

        /** @param n decoder threads, &ge; 1 (default 1) */
        public Builder threads(int n) { this.threads = n; return this; }

        /** @return the options */
        public DecoderOptions build() { return new DecoderOptions(strict, threads); }
    }
}
